package apiserver

// Tests of deletion propagation: the orphan and foregroundDeletion
// finalizers a delete sets, as kube-apiserver's generic store sets them
// for its garbage collector (no collector runs here: the finalizers stay).

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deleteRaw sends DELETE path with body and returns the status code and
// the decoded answer.
func deleteRaw(t *testing.T, ts *testServer, path, body string) (int, *unstructured.Unstructured) {
	t.Helper()
	var code int
	path, query, _ := strings.Cut(path, "?")
	req := ts.client.CoreV1().RESTClient().Delete().AbsPath(path)
	if k, v, ok := strings.Cut(query, "="); ok {
		req = req.Param(k, v)
	}
	if body != "" {
		req = req.Body([]byte(body))
	}
	raw, _ := req.Do(context.Background()).StatusCode(&code).Raw()
	var out unstructured.Unstructured
	if err := json.Unmarshal(raw, &out.Object); err != nil {
		t.Fatalf("DELETE %s: %d %s: %v", path, code, raw, err)
	}
	return code, &out
}

func TestDeletePropagationFinalizers(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	const hold = "example.com/hold"
	tests := []struct {
		name, kind string   // kind: configmap, job (batch/v1), event
		finalizers []string // the object's before the delete
		body       string   // DeleteOptions
		query      string
		code       int
		want       []string // finalizers after; nil: the object is gone
		message    string   // of a refusal
	}{
		{name: "no options", kind: "configmap", code: 200},
		{name: "background", kind: "configmap", body: `{"propagationPolicy":"Background"}`, code: 200},
		{name: "foreground", kind: "configmap", body: `{"propagationPolicy":"Foreground"}`, code: 200,
			want: []string{metav1.FinalizerDeleteDependents}},
		{name: "orphan", kind: "configmap", body: `{"propagationPolicy":"Orphan"}`, code: 200,
			want: []string{metav1.FinalizerOrphanDependents}},
		{name: "orphanDependents true", kind: "configmap", body: `{"orphanDependents":true}`, code: 200,
			want: []string{metav1.FinalizerOrphanDependents}},
		{name: "orphanDependents in the query", kind: "configmap", query: "?orphanDependents=true", code: 200,
			want: []string{metav1.FinalizerOrphanDependents}},
		{name: "propagationPolicy in the query", kind: "configmap", query: "?propagationPolicy=Foreground", code: 200,
			want: []string{metav1.FinalizerDeleteDependents}},
		{name: "orphanDependents false", kind: "configmap", body: `{"orphanDependents":false}`, code: 200},
		{name: "orphanDependents false, held", kind: "configmap", finalizers: []string{hold}, body: `{"orphanDependents":false}`,
			code: 202, want: []string{hold}},
		{name: "foreground after another finalizer", kind: "configmap", finalizers: []string{hold},
			body: `{"propagationPolicy":"Foreground"}`, code: 200, want: []string{hold, metav1.FinalizerDeleteDependents}},
		{name: "background removes an orphan finalizer", kind: "configmap",
			finalizers: []string{hold, metav1.FinalizerOrphanDependents},
			body:       `{"propagationPolicy":"Background"}`, code: 200, want: []string{hold}},
		{name: "an orphan finalizer is the default", kind: "configmap", finalizers: []string{metav1.FinalizerOrphanDependents},
			code: 200, want: []string{metav1.FinalizerOrphanDependents}},
		{name: "both set", kind: "configmap", body: `{"orphanDependents":true,"propagationPolicy":"Orphan"}`, code: 422,
			message: `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`},
		{name: "unknown policy", kind: "configmap", body: `{"propagationPolicy":"Sideways"}`, code: 422,
			message: `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{name: "batch/v1 jobs orphan by default", kind: "job", code: 200, want: []string{metav1.FinalizerOrphanDependents}},
		{name: "batch/v1 jobs with background", kind: "job", body: `{"propagationPolicy":"Background"}`, code: 200},
		{name: "events do not support collection", kind: "event", body: `{"propagationPolicy":"Foreground"}`, code: 200},
		{name: "dry run", kind: "configmap", query: "?dryRun=All", body: `{"propagationPolicy":"Foreground"}`, code: 200,
			want: []string{}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("prop-%d", i)
			meta := metav1.ObjectMeta{Name: name, Finalizers: tc.finalizers}
			var path string
			var err error
			get := func() (metav1.Object, error) { return nil, nil }
			switch tc.kind {
			case "configmap":
				_, err = ts.client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{})
				path = "/api/v1/namespaces/default/configmaps/" + name
				get = func() (metav1.Object, error) {
					return ts.client.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
				}
			case "job":
				job := &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
				_, err = ts.client.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{})
				path = "/apis/batch/v1/namespaces/default/jobs/" + name
				get = func() (metav1.Object, error) {
					return ts.client.BatchV1().Jobs("default").Get(ctx, name, metav1.GetOptions{})
				}
			case "event":
				ev := &corev1.Event{ObjectMeta: meta, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"}}
				_, err = ts.client.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{})
				path = "/api/v1/namespaces/default/events/" + name
				get = func() (metav1.Object, error) {
					return ts.client.CoreV1().Events("default").Get(ctx, name, metav1.GetOptions{})
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			code, out := deleteRaw(t, ts, path+tc.query, tc.body)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %v", code, tc.code, out.Object)
			}
			if tc.message != "" {
				if msg, _, _ := unstructured.NestedString(out.Object, "message"); msg != tc.message {
					t.Errorf("message %q\nwant    %q", msg, tc.message)
				}
				return
			}
			obj, err := get()
			if tc.want == nil {
				if out.GetKind() != "Status" || err == nil {
					t.Errorf("answer %s, get error %v: want the object deleted", out.GetKind(), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantStored, wantAnswered := tc.want, tc.want
			if tc.query == "?dryRun=All" {
				wantStored, wantAnswered = []string{}, []string{metav1.FinalizerDeleteDependents}
			}
			if !slices.Equal(out.GetFinalizers(), wantAnswered) || out.GetDeletionTimestamp() == nil {
				t.Errorf("answer: finalizers %q deletionTimestamp %v, want %q and set", out.GetFinalizers(), out.GetDeletionTimestamp(), wantAnswered)
			}
			if got := obj.GetFinalizers(); !slices.Equal(got, wantStored) && (len(got) > 0 || len(wantStored) > 0) {
				t.Errorf("stored finalizers %q, want %q", got, wantStored)
			}
			if (obj.GetDeletionTimestamp() != nil) != (len(wantStored) > 0) {
				t.Errorf("stored deletionTimestamp %v with finalizers %q", obj.GetDeletionTimestamp(), wantStored)
			}
		})
	}
}

// TestDeleteAgainChangesPropagation: a second delete of an object held by
// finalizers sets the finalizers its options ask for, and one that leaves
// none deletes it, as kube-apiserver's store does while no graceful
// deletion is pending.
func TestDeleteAgainChangesPropagation(t *testing.T) {
	ts := newTestServer(t)
	cms := ts.client.CoreV1().ConfigMaps("default")
	mustCreateConfigMap(t, cms, "again", nil, nil)
	path := "/api/v1/namespaces/default/configmaps/again"
	steps := []struct {
		body string
		want []string // nil: gone
	}{
		{`{"propagationPolicy":"Foreground"}`, []string{metav1.FinalizerDeleteDependents}},
		{`{"propagationPolicy":"Orphan"}`, []string{metav1.FinalizerOrphanDependents}},
		{``, []string{metav1.FinalizerOrphanDependents}},
		{`{"propagationPolicy":"Background"}`, nil},
	}
	var first *metav1.Time
	for _, s := range steps {
		code, out := deleteRaw(t, ts, path, s.body)
		if code != 200 {
			t.Fatalf("delete %s: %d %v", s.body, code, out.Object)
		}
		if s.want == nil {
			if out.GetKind() != "Status" {
				t.Errorf("delete %s: answer %v, want a Status", s.body, out.Object)
			}
			continue
		}
		if !slices.Equal(out.GetFinalizers(), s.want) {
			t.Errorf("delete %s: finalizers %q, want %q", s.body, out.GetFinalizers(), s.want)
		}
		if first == nil {
			first = out.GetDeletionTimestamp()
		} else if !out.GetDeletionTimestamp().Equal(first) {
			t.Errorf("delete %s: deletionTimestamp %v changed from %v", s.body, out.GetDeletionTimestamp(), first)
		}
	}
	if _, err := cms.Get(context.Background(), "again", metav1.GetOptions{}); err == nil {
		t.Error("the configmap is still there")
	}
}

// TestDeleteCollectionPropagation: deletecollection sets the finalizers on
// every object it matches.
func TestDeleteCollectionPropagation(t *testing.T) {
	ts := newTestServer(t)
	cms := ts.client.CoreV1().ConfigMaps("default")
	for _, n := range []string{"c1", "c2"} {
		mustCreateConfigMap(t, cms, n, nil, map[string]string{"set": "orphans"})
	}
	policy := metav1.DeletePropagationOrphan
	ctx := context.Background()
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy},
		metav1.ListOptions{LabelSelector: "set=orphans"}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "set=orphans"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("%d configmaps left, want 2", len(list.Items))
	}
	for _, cm := range list.Items {
		if !slices.Equal(cm.Finalizers, []string{metav1.FinalizerOrphanDependents}) || cm.DeletionTimestamp == nil {
			t.Errorf("%s: finalizers %q deletionTimestamp %v, want [orphan] and set", cm.Name, cm.Finalizers, cm.DeletionTimestamp)
		}
	}
}

// TestDeleteNamespacePropagation: the first delete of a namespace sets the
// collector's finalizers as kube-apiserver's namespace storage does
// (orphanDependents=false asks for foregroundDeletion); the namespace is
// emptied and stays with them (no collector runs here).
func TestDeleteNamespacePropagation(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		want       []string
		code       int
	}{
		{"ns-foreground", `{"propagationPolicy":"Foreground"}`, []string{metav1.FinalizerDeleteDependents}, 200},
		{"ns-orphan", `{"propagationPolicy":"Orphan"}`, []string{metav1.FinalizerOrphanDependents}, 200},
		{"ns-keep-false", `{"orphanDependents":false}`, []string{metav1.FinalizerDeleteDependents}, 202},
		{"ns-background", `{"propagationPolicy":"Background"}`, nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ts.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.name}},
				metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			code, out := deleteRaw(t, ts, "/api/v1/namespaces/"+tc.name, tc.body)
			if code != tc.code || !slices.Equal(out.GetFinalizers(), tc.want) || out.GetDeletionTimestamp() == nil {
				t.Errorf("%d: finalizers %q deletionTimestamp %v, want %d %q and set", code, out.GetFinalizers(),
					out.GetDeletionTimestamp(), tc.code, tc.want)
			}
			if phase, _, _ := unstructured.NestedString(out.Object, "status", "phase"); phase != "Terminating" {
				t.Errorf("phase %q, want Terminating", phase)
			}
		})
	}
}
