package apiserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// crudClient is what typed clients of every kind offer (and dynamicCRUD
// adapts the dynamic client to).
type crudClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

type dynamicCRUD struct{ ri dynamic.ResourceInterface }

func (d dynamicCRUD) Create(ctx context.Context, u *unstructured.Unstructured, o metav1.CreateOptions) (*unstructured.Unstructured, error) {
	return d.ri.Create(ctx, u, o)
}

func (d dynamicCRUD) Get(ctx context.Context, name string, o metav1.GetOptions) (*unstructured.Unstructured, error) {
	return d.ri.Get(ctx, name, o)
}

func (d dynamicCRUD) Update(ctx context.Context, u *unstructured.Unstructured, o metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return d.ri.Update(ctx, u, o)
}

func (d dynamicCRUD) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return d.ri.List(ctx, o)
}

func (d dynamicCRUD) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	return d.ri.Delete(ctx, name, o)
}

// toUnstructured converts a typed object for the dynamic client.
func toUnstructured(t testing.TB, obj runtime.Object, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u
}

// runCRUD creates, gets, updates (a label), lists and deletes obj, and
// checks the NotFound that follows.
func runCRUD[T runtime.Object, L runtime.Object](t *testing.T, c crudClient[T, L], obj T, gr schema.GroupResource) {
	ctx := context.Background()
	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm := metaOf(t, created)
	name := cm.GetName()
	if cm.GetUID() == "" || cm.GetResourceVersion() == "" || cm.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("create: system metadata not set: uid %q, resourceVersion %q, creationTimestamp %v",
			cm.GetUID(), cm.GetResourceVersion(), cm.GetCreationTimestamp())
	}
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if gm := metaOf(t, got); gm.GetUID() != cm.GetUID() || gm.GetResourceVersion() != cm.GetResourceVersion() {
		t.Errorf("get: uid %q resourceVersion %q, want %q %q", gm.GetUID(), gm.GetResourceVersion(), cm.GetUID(), cm.GetResourceVersion())
	}
	upd := got.DeepCopyObject().(T)
	metaOf(t, upd).SetLabels(map[string]string{"step": "updated"})
	updated, err := c.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	um := metaOf(t, updated)
	if diff := cmp.Diff(map[string]string{"step": "updated"}, um.GetLabels()); diff != "" {
		t.Errorf("update: labels (-want +got):\n%s", diff)
	}
	if rvInt(t, um.GetResourceVersion()) <= rvInt(t, cm.GetResourceVersion()) || um.GetUID() != cm.GetUID() {
		t.Errorf("update: resourceVersion %s (created %s), uid %s (created %s)",
			um.GetResourceVersion(), cm.GetResourceVersion(), um.GetUID(), cm.GetUID())
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if diff := cmp.Diff([]string{name}, listNames(t, list)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if lm, _ := meta.ListAccessor(list); rvInt(t, lm.GetResourceVersion()) < rvInt(t, um.GetResourceVersion()) {
		t.Errorf("list resourceVersion %s is older than the update's %s", lm.GetResourceVersion(), um.GetResourceVersion())
	}
	if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.Get(ctx, name, metav1.GetOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound,
		message: fmt.Sprintf("%s %q not found", gr.String(), name),
		details: &metav1.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource}})
}

func TestClientCRUD(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"typed/configmap", func(t *testing.T) {
			runCRUD(t, ts.client.CoreV1().ConfigMaps("default"), newConfigMap("typed", map[string]string{"k": "v"}),
				gvrConfigMaps.GroupResource())
		}},
		{"typed/deployment", func(t *testing.T) {
			runCRUD(t, ts.client.AppsV1().Deployments("kube-public"), newDeployment("typed", "nginx:1.27"),
				gvrDeployments.GroupResource())
		}},
		{"typed/clusterrole", func(t *testing.T) {
			runCRUD(t, ts.client.RbacV1().ClusterRoles(), role.DeepCopy(), gvrClusterRoles.GroupResource())
		}},
		{"dynamic/configmap", func(t *testing.T) {
			runCRUD(t, dynamicCRUD{ts.dynamic.Resource(gvrConfigMaps).Namespace("kube-system")},
				toUnstructured(t, newConfigMap("dyn", map[string]string{"k": "v"}), corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				gvrConfigMaps.GroupResource())
		}},
		{"dynamic/deployment", func(t *testing.T) {
			runCRUD(t, dynamicCRUD{ts.dynamic.Resource(gvrDeployments).Namespace("kube-node-lease")},
				toUnstructured(t, newDeployment("dyn", "nginx:1.27"), appsv1.SchemeGroupVersion.WithKind("Deployment")),
				gvrDeployments.GroupResource())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
	// The cluster-scoped kind through the dynamic client needs its own
	// server: the typed case above already listed the only ClusterRole.
	t.Run("dynamic/clusterrole", func(t *testing.T) {
		ts := newTestServer(t)
		runCRUD(t, dynamicCRUD{ts.dynamic.Resource(gvrClusterRoles)},
			toUnstructured(t, role.DeepCopy(), rbacv1.SchemeGroupVersion.WithKind("ClusterRole")),
			gvrClusterRoles.GroupResource())
	})
}
