package jsondec

import (
	"reflect"
	"strings"
	"testing"
)

// listAt returns the value at path in m (nil if there is none).
func listAt(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		o, _ := v.(map[string]any)
		v = o[k]
	}
	return v
}

// same reports whether a and b are one slice or one map, not copies.
func same(a, b any) bool {
	if a == nil || b == nil {
		return false
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestObjectReusing: decoded with a Reuse, an object is what Object makes
// of it; metadata.managedFields written with the same bytes is one value
// across objects, and with other bytes a value of its own; members of that
// name elsewhere, and values that are not lists or objects, are never
// shared.
func TestObjectReusing(t *testing.T) {
	const mf = `[{"manager":"m","fieldsV1":{"f:data":{".":{},"f:k":{}}},"time":"2026-11-27T00:00:00Z"}]`
	const other = `[{"manager":"m","fieldsV1":{"f:data":{".":{},"f:k":{}}},"time":"2026-11-27T00:00:01Z"}]`
	obj := func(name, fields string) string {
		return `{"data":{"k":"v \" ] } \\ [ {"},"kind":"ConfigMap","metadata":{"managedFields":` + fields + `,"name":"` + name + `"}}`
	}
	for _, c := range []struct {
		name         string
		first, again string
		path         []string
		shared       bool
	}{
		{"equal bytes", obj("a", mf), obj("b", mf), []string{"metadata", "managedFields"}, true},
		{"an object", obj("a", `{"x":[1]}`), obj("b", `{"x":[1]}`), []string{"metadata", "managedFields"}, true},
		{"other bytes", obj("a", mf), obj("b", other), []string{"metadata", "managedFields"}, false},
		{"the same value spelt otherwise", obj("a", mf), obj("b", strings.Replace(mf, `"manager":"m",`, `"manager" : "m",`, 1)), []string{"metadata", "managedFields"}, false},
		{"not under metadata", `{"spec":{"managedFields":[1]}}`, `{"spec":{"managedFields":[1]}}`, []string{"spec", "managedFields"}, false},
		{"at the top", `{"managedFields":[1]}`, `{"managedFields":[1]}`, []string{"managedFields"}, false},
		{"deeper", `{"metadata":{"x":{"managedFields":[1]}}}`, `{"metadata":{"x":{"managedFields":[1]}}}`, []string{"metadata", "x", "managedFields"}, false},
		{"in a list under metadata", `{"metadata":[{"managedFields":[1]}]}`, `{"metadata":[{"managedFields":[1]}]}`, nil, false},
		{"a list of one number", obj("a", `[1]`), obj("b", `[1]`), []string{"metadata", "managedFields"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewReuse("metadata", "managedFields", 1<<20)
			var got []map[string]any
			for _, s := range []string{c.first, c.again} {
				m, ok := ObjectReusing([]byte(s), r)
				want, err := upstream([]byte(s))
				if !ok || err != nil || !reflect.DeepEqual(m, want) {
					t.Fatalf("%s: ObjectReusing %#v, %v; upstream %#v, %v", s, m, ok, want, err)
				}
				got = append(got, m)
			}
			if c.path == nil {
				return
			}
			if s := same(listAt(got[0], c.path...), listAt(got[1], c.path...)); s != c.shared {
				t.Errorf("%v shared: %v, want %v", c.path, s, c.shared)
			}
		})
	}
}

// TestObjectReusingRefuses: input Object refuses, ObjectReusing refuses,
// though its member's bytes (up to where its brackets close) are known.
func TestObjectReusingRefuses(t *testing.T) {
	r := NewReuse("metadata", "managedFields", 1<<20)
	if _, ok := ObjectReusing([]byte(`{"metadata":{"managedFields":[{"a":"]"}]}}`), r); !ok {
		t.Fatal("valid object refused")
	}
	for _, s := range []string{
		`{"metadata":{"managedFields":[{"a":"]"}]}`,
		`{"metadata":{"managedFields":[{"a":"]"}]}}x`,
		`{"metadata":{"managedFields":[{"a":"]"}]`,
		`{"metadata":{"managedFields":[{"a":"]"}`,
		`{"metadata":{"managedFields":[{"a":"]}]}}`,
		`{"metadata":{"managedFields":[{"a":1,}]}}`,
		`{"metadata":{"managedFields":[{"a":"\"}]}}`,
	} {
		if m, ok := ObjectReusing([]byte(s), r); ok {
			t.Errorf("%s: decoded as %#v, want refused", s, m)
		}
	}
}

// TestReuseBound: a Reuse keeps at most its bytes of JSON; past them it
// starts afresh, and a value larger than them is never kept.
func TestReuseBound(t *testing.T) {
	r := NewReuse("metadata", "managedFields", 40)
	doc := func(n int) []byte { return []byte(`{"metadata":{"managedFields":[` + strings.Repeat("1,", n) + `1]}}`) }
	decode := func(data []byte) any {
		m, ok := ObjectReusing(data, r)
		if !ok {
			t.Fatalf("%s refused", data)
		}
		return listAt(m, "metadata", "managedFields")
	}
	a := decode(doc(5)) // 13 bytes
	if !same(a, decode(doc(5))) {
		t.Fatal("a value within the bound was not reused")
	}
	decode(doc(6)) // 15: 28 kept
	decode(doc(7)) // 17: past 40, afresh
	if same(a, decode(doc(5))) {
		t.Error("a value kept past the bound")
	}
	big := decode(doc(30))
	if same(big, decode(doc(30))) {
		t.Error("a value larger than the bound was kept")
	}
}
