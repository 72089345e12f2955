package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestClientFinalizers(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	tests := []struct {
		name    string
		release func(name string, cur *corev1.ConfigMap) (*corev1.ConfigMap, error)
	}{
		{"update", func(name string, cur *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			cur.Finalizers = nil
			return cms.Update(ctx, cur, metav1.UpdateOptions{})
		}},
		{"merge patch", func(name string, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}},
		{"json patch", func(name string, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
		}},
		{"strategic patch", func(name string, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, name, types.StrategicMergePatchType,
				[]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/hold"]}}`), metav1.PatchOptions{})
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("fin-%d", i)
			cm := newConfigMap(name, map[string]string{"k": "v"})
			cm.Finalizers = []string{"example.com/hold"}
			created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var code int
			raw, err := ts.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("configmaps").Name(name).
				Do(ctx).StatusCode(&code).Raw()
			if err != nil {
				t.Fatalf("delete: %v", err)
			}
			var answer corev1.ConfigMap
			if err := json.Unmarshal(raw, &answer); err != nil {
				t.Fatal(err)
			}
			if code != 200 || answer.Kind != "ConfigMap" || answer.Name != name || answer.DeletionTimestamp == nil ||
				answer.DeletionGracePeriodSeconds == nil || *answer.DeletionGracePeriodSeconds != 0 ||
				!slices.Equal(answer.Finalizers, []string{"example.com/hold"}) || answer.UID != created.UID {
				t.Errorf("delete answer: code %d\n%s\nwant 200 with the object, a deletionTimestamp, grace period 0 and its finalizer", code, raw)
			}
			cur, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || cur.DeletionTimestamp == nil {
				t.Fatalf("get after delete: %v, deletionTimestamp %v", err, cur.GetDeletionTimestamp())
			}
			// A second delete changes nothing and answers the object again.
			if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("second delete: %v", err)
			}
			again, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || !again.DeletionTimestamp.Equal(cur.DeletionTimestamp) {
				t.Errorf("after a second delete: %v, deletionTimestamp %v, want %v", err, again.GetDeletionTimestamp(), cur.DeletionTimestamp)
			}
			out, err := tc.release(name, again)
			if err != nil {
				t.Fatalf("releasing the finalizer: %v", err)
			}
			if len(out.Finalizers) != 0 {
				t.Errorf("answer still has finalizers %v", out.Finalizers)
			}
			_, err = cms.Get(ctx, name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("get after releasing the last finalizer: %v, want NotFound", err)
			}
		})
	}
}

func TestClientDeleteAnswer(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cm := mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "gone", nil, nil)
	d, err := ts.client.AppsV1().Deployments("default").Create(ctx, newDeployment("gone", "nginx:1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := ts.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  func() ([]byte, int, error)
		want string
	}{
		{"configmap", func() ([]byte, int, error) {
			var code int
			raw, err := ts.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("configmaps").Name("gone").Do(ctx).StatusCode(&code).Raw()
			return raw, code, err
		}, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","kind":"configmaps","uid":%q}}`, cm.UID)},
		{"deployment", func() ([]byte, int, error) {
			var code int
			raw, err := ts.client.AppsV1().RESTClient().Delete().Namespace("default").Resource("deployments").Name("gone").Do(ctx).StatusCode(&code).Raw()
			return raw, code, err
		}, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","group":"apps","kind":"deployments","uid":%q}}`, d.UID)},
		{"clusterrole", func() ([]byte, int, error) {
			var code int
			raw, err := ts.client.RbacV1().RESTClient().Delete().Resource("clusterroles").Name("gone").Do(ctx).StatusCode(&code).Raw()
			return raw, code, err
		}, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","group":"rbac.authorization.k8s.io","kind":"clusterroles","uid":%q}}`, cr.UID)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, code, err := tc.req()
			if err != nil {
				t.Fatal(err)
			}
			if code != 200 {
				t.Errorf("code = %d, want 200", code)
			}
			var got, want any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%v\n%s", err, raw)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
	// Deleting what is gone is NotFound.
	err = ts.client.CoreV1().ConfigMaps("default").Delete(ctx, "gone", metav1.DeleteOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "gone" not found`,
		details: &metav1.StatusDetails{Name: "gone", Kind: "configmaps"}})
}

func TestClientDeletePreconditions(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	tests := []struct {
		name       string
		finalizer  bool
		dryRun     bool
		uid        func(real types.UID) *types.UID
		rv         func(real string) *string
		wantDetail string // "" for success; else the precondition complaint of kube-apiserver's rest.BeforeDelete
	}{
		{name: "uid matches", uid: func(u types.UID) *types.UID { return &u }},
		{name: "resourceVersion matches", rv: func(r string) *string { return &r }},
		{name: "both match", uid: func(u types.UID) *types.UID { return &u }, rv: func(r string) *string { return &r }},
		{name: "uid mismatch", uid: func(types.UID) *types.UID { return ptr.To(types.UID("wrong-uid")) },
			wantDetail: "the UID in the precondition (wrong-uid) does not match the UID in record (%[1]s). The object might have been deleted and then recreated"},
		{name: "resourceVersion mismatch", rv: func(string) *string { return ptr.To("1") },
			wantDetail: "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%[2]s). The object might have been modified"},
		{name: "uid mismatch, dry run", dryRun: true, uid: func(types.UID) *types.UID { return ptr.To(types.UID("wrong-uid")) },
			wantDetail: "the UID in the precondition (wrong-uid) does not match the UID in record (%[1]s). The object might have been deleted and then recreated"},
		{name: "resourceVersion mismatch, dry run", dryRun: true, rv: func(string) *string { return ptr.To("1") },
			wantDetail: "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%[2]s). The object might have been modified"},
		{name: "uid mismatch, with a finalizer", finalizer: true, uid: func(types.UID) *types.UID { return ptr.To(types.UID("wrong-uid")) },
			wantDetail: "the UID in the precondition (wrong-uid) does not match the UID in record (%[1]s). The object might have been deleted and then recreated"},
		{name: "resourceVersion mismatch, with a finalizer", finalizer: true, rv: func(string) *string { return ptr.To("1") },
			wantDetail: "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%[2]s). The object might have been modified"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("pre-%d", i)
			cm := newConfigMap(name, nil)
			if tc.finalizer {
				cm.Finalizers = []string{"example.com/hold"}
			}
			cur, err := cms.Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{}}
			if tc.uid != nil {
				opts.Preconditions.UID = tc.uid(cur.UID)
			}
			if tc.rv != nil {
				opts.Preconditions.ResourceVersion = tc.rv(cur.ResourceVersion)
			}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			err = cms.Delete(ctx, name, opts)
			if tc.wantDetail == "" {
				if err != nil {
					t.Fatalf("delete: %v", err)
				}
				if _, err := cms.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("get after delete: %v, want NotFound", err)
				}
				return
			}
			if !apierrors.IsConflict(err) {
				t.Fatalf("delete: %v, want Conflict", err)
			}
			checkStatusErr(t, err, statusWant{code: 409, reason: metav1.StatusReasonConflict,
				prefix:  fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap %q: `, name),
				details: &metav1.StatusDetails{Name: name, Kind: "ConfigMap"}})
			detail := fmt.Sprintf(tc.wantDetail, cur.UID, cur.ResourceVersion)
			if msg := err.Error(); !strings.HasSuffix(msg, detail) {
				t.Errorf("message %q\nshould end with kube-apiserver's %q", msg, detail)
			}
			after, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || after.ResourceVersion != cur.ResourceVersion || after.DeletionTimestamp != nil {
				t.Errorf("after a failed delete: %v, rv %s (was %s), deletionTimestamp %v", err, after.GetResourceVersion(), cur.ResourceVersion, after.GetDeletionTimestamp())
			}
		})
	}
}

// TestDeletePreconditionNamesKind: a failed precondition names the kind
// and its group, as kube-apiserver's rest.BeforeDelete words the conflict.
func TestDeletePreconditionNamesKind(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	roles := ts.client.RbacV1().Roles("default")
	role, err := roles.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = roles.Delete(ctx, "r", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}})
	checkStatusErr(t, err, statusWant{code: 409, reason: "Conflict",
		message: fmt.Sprintf(`Operation cannot be fulfilled on Role.rbac.authorization.k8s.io "r": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified`, role.ResourceVersion),
		details: &metav1.StatusDetails{Name: "r", Group: "rbac.authorization.k8s.io", Kind: "Role"}})
}
