package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/stratadev/strata/internal/convhook"
	"github.com/stratadev/strata/storage"
)

var gvrBackendsCRD = "backends.stable.example.com"

func backendsGVR(version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "stable.example.com", Version: version, Resource: "backends"}
}

// conversionServer is a test server whose storage key prefix the test
// knows, to read what etcd holds.
func conversionServer(t *testing.T, tweak ...func(*Config)) (*testServer, string) {
	t.Helper()
	var prefix string
	ts := newTestServer(t, append([]func(*Config){func(c *Config) {
		set := c.Storage
		c.Storage = func(sc *storage.Config) { set(sc); prefix = sc.Prefix }
	}}, tweak...)...)
	return ts, prefix
}

// createBackendsCRD creates testdata/conversion/backends-crd.yaml with
// hook as its conversion webhook (url and caBundle) and waits until both
// versions answer.
func createBackendsCRD(t *testing.T, ts *testServer, clientConfig map[string]any) {
	t.Helper()
	data, err := os.ReadFile("testdata/conversion/backends-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(crd.Object, clientConfig, "spec", "conversion", "webhook", "clientConfig"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ts.dynamic.Resource(gvrCRDs).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
	eventually(t, 5*time.Second, func() string {
		for _, v := range []string{"v1", "v2"} {
			if _, err := backends(ts, v).List(ctx, metav1.ListOptions{}); err != nil {
				return v + ": " + err.Error()
			}
		}
		return ""
	})
}

// urlConfig is a clientConfig naming hook by URL, with its CA.
func urlConfig(hook *convhook.Hook) map[string]any {
	return map[string]any{"url": hook.URL(), "caBundle": base64.StdEncoding.EncodeToString(hook.CABundle())}
}

func backends(ts *testServer, version string) dynamic.ResourceInterface {
	return ts.dynamic.Resource(backendsGVR(version)).Namespace("default")
}

func backend(version, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/" + version, "kind": "Backend",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// brief is what the tests compare of a Backend: apiVersion, kind, name
// and spec (metadata otherwise is the server's).
func brief(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	return map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "spec": obj["spec"]}
}

// stored reads a Backend as etcd holds it.
func stored(t *testing.T, prefix, name string) map[string]any {
	t.Helper()
	resp, err := testEtcd.Get(context.Background(), prefix+"/stable.example.com/backends/default/"+name)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("reading %s from etcd: %v (%d keys)", name, err, len(resp.Kvs))
	}
	var obj map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &obj); err != nil {
		t.Fatal(err)
	}
	return brief(obj)
}

// mustBrief returns brief of a call's object, failing t on its error.
func mustBrief(t *testing.T) func(*unstructured.Unstructured, error) map[string]any {
	return func(u *unstructured.Unstructured, err error) map[string]any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return normalize(brief(u.Object))
	}
}

// normalize makes JSON numbers of a decoded object comparable with the
// tests' literals.
func normalize(v map[string]any) map[string]any {
	data, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

func briefList(t *testing.T, l *unstructured.UnstructuredList, err error) []map[string]any {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, item := range l.Items {
		out = append(out, normalize(brief(item.Object)))
	}
	return out
}

func want(version, name string, spec map[string]any) map[string]any {
	return normalize(brief(backend(version, name, spec).Object))
}

var (
	specA  = map[string]any{"host": "db", "port": 5432}
	specAv = map[string]any{"address": "db:5432"}
	specB  = map[string]any{"host": "cache", "port": 6379}
	specBv = map[string]any{"address": "cache:6379"}
)

// TestConversionWebhook: objects written in either version are stored in
// the storage version and read, listed and watched in the version asked
// for, converted by the CRD's webhook.
func TestConversionWebhook(t *testing.T) {
	hook := convhook.New(t)
	ts, prefix := conversionServer(t)
	createBackendsCRD(t, ts, urlConfig(hook))
	ctx := context.Background()

	created := mustBrief(t)(backends(ts, "v1").Create(ctx, backend("v1", "a", specA), metav1.CreateOptions{}))
	if diff := cmp.Diff(want("v1", "a", specA), created); diff != "" {
		t.Errorf("create a in v1 (-want +got):\n%s", diff)
	}
	created = mustBrief(t)(backends(ts, "v2").Create(ctx, backend("v2", "b", specBv), metav1.CreateOptions{}))
	if diff := cmp.Diff(want("v2", "b", specBv), created); diff != "" {
		t.Errorf("create b in v2 (-want +got):\n%s", diff)
	}
	for name, spec := range map[string]map[string]any{"a": specA, "b": specB} {
		if diff := cmp.Diff(want("v1", name, spec), normalize(stored(t, prefix, name))); diff != "" {
			t.Errorf("etcd holds %s (-want +got):\n%s", name, diff)
		}
	}

	// Once the watch caches hold both, a read calls the webhook only when
	// the object is stored in another version than the one asked for.
	eventually(t, 5*time.Second, func() string {
		l, err := backends(ts, "v2").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil || len(l.Items) != 2 {
			return fmt.Sprintf("the v2 cache: %v %v", l, err)
		}
		return ""
	})
	reads := []struct {
		version, name string
		want          map[string]any
		calls         int64
	}{
		{"v1", "a", want("v1", "a", specA), 0},
		{"v2", "a", want("v2", "a", specAv), 1},
		{"v1", "b", want("v1", "b", specB), 0},
		{"v2", "b", want("v2", "b", specBv), 1},
	}
	for _, r := range reads {
		before := hook.Calls.Load()
		got := mustBrief(t)(backends(ts, r.version).Get(ctx, r.name, metav1.GetOptions{}))
		if diff := cmp.Diff(r.want, got); diff != "" {
			t.Errorf("get %s in %s (-want +got):\n%s", r.name, r.version, diff)
		}
		if n := hook.Calls.Load() - before; n != r.calls {
			t.Errorf("get %s in %s called the webhook %d times, want %d", r.name, r.version, n, r.calls)
		}
	}
	lists := map[string][]map[string]any{
		"v1": {want("v1", "a", specA), want("v1", "b", specB)},
		"v2": {want("v2", "a", specAv), want("v2", "b", specBv)},
	}
	var listRV string
	for version, items := range lists {
		for _, rv := range []string{"", "0"} { // etcd, then the watch cache
			l, err := backends(ts, version).List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if diff := cmp.Diff(items, briefList(t, l, err)); diff != "" {
				t.Errorf("list in %s at RV %q (-want +got):\n%s", version, rv, diff)
			}
			if version == "v2" && rv == "" {
				listRV = l.GetResourceVersion()
			}
		}
	}

	w, err := backends(ts, "v2").Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	updated := backend("v1", "a", map[string]any{"host": "db", "port": 5433})
	cur, err := backends(ts, "v1").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated.SetResourceVersion(cur.GetResourceVersion())
	if _, err := backends(ts, "v1").Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		u, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Modified || u == nil {
			t.Fatalf("watch in v2: %s %T", ev.Type, ev.Object)
		}
		if diff := cmp.Diff(want("v2", "a", map[string]any{"address": "db:5433"}), normalize(brief(u.Object))); diff != "" {
			t.Errorf("watch in v2 (-want +got):\n%s", diff)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event in v2")
	}

	t.Run("storage version migration", func(t *testing.T) { testStorageVersionMigration(t, ts, prefix) })
	t.Run("v1beta1 review", func(t *testing.T) { testReviewV1beta1(t, ts, hook) })
}

// testStorageVersionMigration makes v2 the storage version; an update
// that changes nothing rewrites a in v2; b, still stored in v1, lists with
// it in either version.
func testStorageVersionMigration(t *testing.T, ts *testServer, prefix string) {
	ctx := context.Background()
	crd := editBackendsCRD(t, ts, func(crd *unstructured.Unstructured) {
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			v.(map[string]any)["storage"] = v.(map[string]any)["name"] == "v2"
		}
		_ = unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
	})
	if got, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions"); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Errorf("storedVersions = %v, want [v1 v2]", got)
	}
	// Re-write a (read, update with no change) until the new storage
	// version is served, as a storage migrator does.
	eventually(t, 5*time.Second, func() string {
		cur, err := backends(ts, "v1").Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if _, err := backends(ts, "v1").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err.Error()
		}
		if got := stored(t, prefix, "a"); got["apiVersion"] != "stable.example.com/v2" {
			return "etcd holds a as " + jsonString(got)
		}
		return ""
	})
	if diff := cmp.Diff(want("v2", "a", map[string]any{"address": "db:5433"}), normalize(stored(t, prefix, "a"))); diff != "" {
		t.Errorf("etcd holds a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want("v1", "b", specB), normalize(stored(t, prefix, "b"))); diff != "" {
		t.Errorf("etcd holds b (-want +got):\n%s", diff)
	}
	lists := map[string][]map[string]any{
		"v1": {want("v1", "a", map[string]any{"host": "db", "port": 5433}), want("v1", "b", specB)},
		"v2": {want("v2", "a", map[string]any{"address": "db:5433"}), want("v2", "b", specBv)},
	}
	for version, items := range lists {
		l, err := backends(ts, version).List(ctx, metav1.ListOptions{})
		if diff := cmp.Diff(items, briefList(t, l, err)); diff != "" {
			t.Errorf("list of mixed storage versions in %s (-want +got):\n%s", version, diff)
		}
	}

	// Server-side apply in v1 to a, stored in v2: the field manager
	// converts, and the entry names the applied version.
	apply := []byte(`{"apiVersion":"stable.example.com/v1","kind":"Backend","metadata":{"name":"a"},"spec":{"host":"db","port":5434}}`)
	force := true
	got, err := backends(ts, "v1").Patch(ctx, "a", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "tester", Force: &force})
	if diff := cmp.Diff(want("v1", "a", map[string]any{"host": "db", "port": 5434}), mustBrief(t)(got, err)); diff != "" {
		t.Errorf("apply in v1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want("v2", "a", map[string]any{"address": "db:5434"}), normalize(stored(t, prefix, "a"))); diff != "" {
		t.Errorf("etcd holds a after apply (-want +got):\n%s", diff)
	}
	for _, mf := range got.GetManagedFields() {
		if mf.Manager == "tester" && mf.APIVersion != "stable.example.com/v1" {
			t.Errorf("managedFields of tester name %s, want stable.example.com/v1", mf.APIVersion)
		}
	}
}

// testReviewV1beta1: a CRD whose conversionReviewVersions name only
// v1beta1 gets ConversionReviews of v1beta1.
func testReviewV1beta1(t *testing.T, ts *testServer, hook *convhook.Hook) {
	ctx := context.Background()
	editBackendsCRD(t, ts, func(crd *unstructured.Unstructured) {
		_ = unstructured.SetNestedStringSlice(crd.Object, []string{"v1beta1"}, "spec", "conversion", "webhook", "conversionReviewVersions")
	})
	eventually(t, 5*time.Second, func() string {
		got, err := backends(ts, "v1").Get(ctx, "a", metav1.GetOptions{}) // stored in v2
		if err != nil {
			return err.Error()
		}
		if diff := cmp.Diff(want("v1", "a", map[string]any{"host": "db", "port": 5434}), normalize(brief(got.Object))); diff != "" {
			return diff
		}
		if r := hook.ReviewVersions(); r[len(r)-1] != "apiextensions.k8s.io/v1beta1" {
			return "the last review was " + r[len(r)-1]
		}
		return ""
	})
}

// editBackendsCRD reads the backends CRD, lets edit change it and updates
// it, again on a conflict (the server's CRD controller writes its status
// after each change, as a client of kube-apiserver must expect too).
func editBackendsCRD(t *testing.T, ts *testServer, edit func(*unstructured.Unstructured)) *unstructured.Unstructured {
	t.Helper()
	var out *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := ts.dynamic.Resource(gvrCRDs).Get(context.Background(), gvrBackendsCRD, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(crd)
		out, err = ts.dynamic.Resource(gvrCRDs).Update(context.Background(), crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
