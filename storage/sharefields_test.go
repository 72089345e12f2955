package storage

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managed is a managedFields entry of manager owning fieldsV1 set.
func managed(manager string, set map[string]any) map[string]any {
	return map[string]any{"manager": manager, "operation": "Update", "apiVersion": "v1",
		"fieldsType": "FieldsV1", "fieldsV1": set}
}

func withManaged(obj map[string]any, entries ...map[string]any) map[string]any {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	obj["metadata"] = map[string]any{"name": "x", "managedFields": list}
	return obj
}

func fieldsOf(obj map[string]any, i int) map[string]any {
	return obj["metadata"].(map[string]any)["managedFields"].([]any)[i].(map[string]any)["fieldsV1"].(map[string]any)
}

// listOf is the first element's address of obj's managedFields list.
func listOf(obj map[string]any) *any {
	return &obj["metadata"].(map[string]any)["managedFields"].([]any)[0]
}

func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestFieldsTableShares: equal fieldsV1 sets of different objects end up
// one tree, unequal ones stay apart, and objects without managed fields
// are left alone.
func TestFieldsTableShares(t *testing.T) {
	set := func(f string) map[string]any {
		return map[string]any{"f:data": map[string]any{".": map[string]any{}, f: map[string]any{}}}
	}
	var tab fieldsTable
	a := withManaged(map[string]any{}, managed("m", set("f:a")), managed("n", set("f:b")))
	b := withManaged(map[string]any{}, managed("m", set("f:a")))
	c := withManaged(map[string]any{}, managed("m", set("f:c")))
	d := withManaged(map[string]any{}, managed("m", set("f:a")))
	bare := map[string]any{"metadata": map[string]any{"name": "y"}}
	for _, o := range []map[string]any{a, b, c, d, bare, {}} {
		tab.share(o)
	}
	if !sameMap(fieldsOf(a, 0), fieldsOf(b, 0)) {
		t.Error("equal sets are not shared")
	}
	if sameMap(fieldsOf(a, 0), fieldsOf(c, 0)) || sameMap(fieldsOf(a, 0), fieldsOf(a, 1)) {
		t.Error("unequal sets are shared")
	}
	if listOf(b) != listOf(d) {
		t.Error("equal lists are not shared")
	}
	if listOf(b) == listOf(c) || listOf(a) == listOf(b) {
		t.Error("unequal lists are shared")
	}
	if !reflect.DeepEqual(fieldsOf(b, 0), set("f:a")) || !reflect.DeepEqual(fieldsOf(c, 0), set("f:c")) {
		t.Errorf("shared sets changed: %v, %v", fieldsOf(b, 0), fieldsOf(c, 0))
	}
}

// TestFieldsTableLeavesDecodedListsAlone: a list the decoder hands to
// several objects (Store.reuse) is never changed: the first object that
// has it gets the table's list, and so does every later one, without the
// list being read again.
func TestFieldsTableLeavesDecodedListsAlone(t *testing.T) {
	set := func() map[string]any { return map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}} }
	var tab fieldsTable
	first := withManaged(map[string]any{}, managed("m", set()))
	tab.share(first)
	decoded := withManaged(map[string]any{}, managed("n", set()))
	list := decoded["metadata"].(map[string]any)["managedFields"].([]any)
	entry, fields := list[0].(map[string]any), fieldsOf(decoded, 0)
	again := map[string]any{"metadata": map[string]any{"name": "y", "managedFields": list}}
	tab.share(decoded)
	if !sameMap(list[0].(map[string]any), entry) || !sameMap(entry["fieldsV1"].(map[string]any), fields) {
		t.Fatal("the decoded list was changed")
	}
	if !sameMap(fieldsOf(decoded, 0), fieldsOf(first, 0)) {
		t.Error("the object's equal set is not the table's")
	}
	entry["manager"] = "changed after share" // the table knows the list by its address now
	tab.share(again)
	if listOf(again) != listOf(decoded) || fieldsOf(again, 0)["f:data"] == nil {
		t.Error("a later object with the same decoded list did not get the table's list")
	}
	if m := again["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)["manager"]; m != "n" {
		t.Errorf("manager %v: the list was read again, want the table's (n)", m)
	}
}

// TestFieldsTableBound: the table's keys stay within fieldsTableBytes; past
// it, it starts afresh.
func TestFieldsTableBound(t *testing.T) {
	var tab fieldsTable
	big := strings.Repeat("x", 1000)
	for i := range 3 * fieldsTableBytes / 1000 {
		tab.share(withManaged(map[string]any{}, managed("m", map[string]any{fmt.Sprintf("f:%s%d", big, i): map[string]any{}})))
		if tab.bytes > fieldsTableBytes {
			t.Fatalf("after %d sets the table keeps %d bytes of keys, over %d", i+1, tab.bytes, fieldsTableBytes)
		}
	}
}

// TestCacheSharedFieldsStayApart: objects whose fieldsV1 the cache shares
// are still objects of their own: an update that changes one's managed
// fields in place (as update functions may: they get a copy) leaves the
// other's as it was, in the cache and in etcd.
func TestCacheSharedFieldsStayApart(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	set := map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:size": map[string]any{}}}
	for _, name := range []string{"a", "b"} {
		w := widget("n", name, nil)
		withManaged(w.Object, managed("m", set))
		w.SetName(name)
		w.SetNamespace("n")
		mustCreate(t, s, w)
	}
	out, err := s.GuaranteedUpdate(ctx, "n", "a", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		fieldsOf(cur.Object, 0)["f:spec"].(map[string]any)["f:color"] = map[string]any{}
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cache.waitRevision(ctx, rvOf(t, out), 0); err != nil {
		t.Fatal(err)
	}
	for _, rv := range []string{"0", ""} { // the cache, then etcd
		l, err := s.List(ctx, "n", ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range l.Items {
			_, colored := fieldsOf(it.Object, 0)["f:spec"].(map[string]any)["f:color"]
			if colored != (it.GetName() == "a") {
				t.Errorf("list at RV %q: %s has f:color %t", rv, it.GetName(), colored)
			}
		}
	}
}
