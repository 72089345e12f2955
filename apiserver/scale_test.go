package apiserver

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// scalable is one built-in kind with a scale subresource, reached through
// its typed client.
type scalable struct {
	resource string
	create   func(ctx context.Context, c kubernetes.Interface, ns string) (metav1.Object, error)
	get      func(ctx context.Context, c kubernetes.Interface, ns, name string) (replicas int32, generation int64, err error)
	getScale func(ctx context.Context, c kubernetes.Interface, ns, name string) (*autoscalingv1.Scale, error)
	update   func(ctx context.Context, c kubernetes.Interface, ns string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error)
}

var webLabels = map[string]string{"app": "web"}

func webTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: webLabels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
}

var scalables = []scalable{
	{
		resource: "deployments.apps",
		create: func(ctx context.Context, c kubernetes.Interface, ns string) (metav1.Object, error) {
			return c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: webLabels},
					Template: webTemplate()}}, metav1.CreateOptions{})
		},
		get: func(ctx context.Context, c kubernetes.Interface, ns, name string) (int32, int64, error) {
			d, err := c.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return 0, 0, err
			}
			return *d.Spec.Replicas, d.Generation, nil
		},
		getScale: func(ctx context.Context, c kubernetes.Interface, ns, name string) (*autoscalingv1.Scale, error) {
			return c.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, c kubernetes.Interface, ns string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			return c.AppsV1().Deployments(ns).UpdateScale(ctx, sc.Name, sc, metav1.UpdateOptions{})
		},
	},
	{
		resource: "replicasets.apps",
		create: func(ctx context.Context, c kubernetes.Interface, ns string) (metav1.Object, error) {
			return c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: webLabels},
					Template: webTemplate()}}, metav1.CreateOptions{})
		},
		get: func(ctx context.Context, c kubernetes.Interface, ns, name string) (int32, int64, error) {
			d, err := c.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return 0, 0, err
			}
			return *d.Spec.Replicas, d.Generation, nil
		},
		getScale: func(ctx context.Context, c kubernetes.Interface, ns, name string) (*autoscalingv1.Scale, error) {
			return c.AppsV1().ReplicaSets(ns).GetScale(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, c kubernetes.Interface, ns string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			return c.AppsV1().ReplicaSets(ns).UpdateScale(ctx, sc.Name, sc, metav1.UpdateOptions{})
		},
	},
	{
		resource: "statefulsets.apps",
		create: func(ctx context.Context, c kubernetes.Interface, ns string) (metav1.Object, error) {
			return c.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: webLabels},
					Template: webTemplate()}}, metav1.CreateOptions{})
		},
		get: func(ctx context.Context, c kubernetes.Interface, ns, name string) (int32, int64, error) {
			d, err := c.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return 0, 0, err
			}
			return *d.Spec.Replicas, d.Generation, nil
		},
		getScale: func(ctx context.Context, c kubernetes.Interface, ns, name string) (*autoscalingv1.Scale, error) {
			return c.AppsV1().StatefulSets(ns).GetScale(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, c kubernetes.Interface, ns string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			return c.AppsV1().StatefulSets(ns).UpdateScale(ctx, sc.Name, sc, metav1.UpdateOptions{})
		},
	},
	{
		resource: "replicationcontrollers",
		create: func(ctx context.Context, c kubernetes.Interface, ns string) (metav1.Object, error) {
			tmpl := webTemplate()
			return c.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2), Selector: webLabels,
					Template: &tmpl}}, metav1.CreateOptions{})
		},
		get: func(ctx context.Context, c kubernetes.Interface, ns, name string) (int32, int64, error) {
			d, err := c.CoreV1().ReplicationControllers(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return 0, 0, err
			}
			return *d.Spec.Replicas, d.Generation, nil
		},
		getScale: func(ctx context.Context, c kubernetes.Interface, ns, name string) (*autoscalingv1.Scale, error) {
			return c.CoreV1().ReplicationControllers(ns).GetScale(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, c kubernetes.Interface, ns string, sc *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			return c.CoreV1().ReplicationControllers(ns).UpdateScale(ctx, sc.Name, sc, metav1.UpdateOptions{})
		},
	},
}

// TestBuiltinScale reads, updates and patches the scale subresource of
// every built-in scalable kind with client-go's typed clients, as
// kube-apiserver answers: the Scale mirrors spec.replicas, status.replicas
// and the selector; a write changes spec.replicas through the kind's
// update strategy (generation bumped); negative replicas are a 422 on
// Scale.autoscaling; a stale resourceVersion is a 409.
func TestBuiltinScale(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	for _, k := range scalables {
		t.Run(k.resource, func(t *testing.T) {
			obj, err := k.create(ctx, ts.client, "default")
			if err != nil {
				t.Fatal(err)
			}
			sc, err := k.getScale(ctx, ts.client, "default", "web")
			if err != nil {
				t.Fatal(err)
			}
			// client-go drops the TypeMeta of typed objects.
			want := &autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: obj.GetUID(),
					ResourceVersion: obj.GetResourceVersion(), CreationTimestamp: obj.GetCreationTimestamp()},
				Spec: autoscalingv1.ScaleSpec{Replicas: 2}, Status: autoscalingv1.ScaleStatus{Selector: "app=web"}}
			if diff := cmp.Diff(want, sc); diff != "" {
				t.Errorf("get scale (-want +got):\n%s", diff)
			}
			sc.Spec.Replicas = 5
			updated, err := k.update(ctx, ts.client, "default", sc)
			if err != nil || updated.Spec.Replicas != 5 || updated.ResourceVersion == sc.ResourceVersion {
				t.Fatalf("update scale: %v (%+v)", err, updated)
			}
			if n, gen, err := k.get(ctx, ts.client, "default", "web"); err != nil || n != 5 || gen != 2 {
				t.Errorf("after update: replicas %d generation %d (%v), want 5 and 2", n, gen, err)
			}
			checkScaleErrors(t, ts, k, sc)
		})
	}
}

// checkScaleErrors: a stale Scale, negative replicas, a merge patch and a
// missing object.
func checkScaleErrors(t *testing.T, ts *testServer, k scalable, stale *autoscalingv1.Scale) {
	ctx := context.Background()
	gr := k.resource
	_, err := k.update(ctx, ts.client, "default", stale)
	checkStatusErr(t, err, statusWant{code: 409, reason: metav1.StatusReasonConflict,
		message: "Operation cannot be fulfilled on " + gr + ` "web": the object has been modified; please apply your changes to the latest version and try again`})
	neg := stale.DeepCopy()
	neg.ResourceVersion, neg.Spec.Replicas = "", -1
	_, err = k.update(ctx, ts.client, "default", neg)
	checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid,
		message: `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`})
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: strings.TrimSuffix(gr, ".apps")}
	if gr == "replicationcontrollers" {
		gvr = schema.GroupVersionResource{Version: "v1", Resource: gr}
	}
	res := ts.dynamic.Resource(gvr).Namespace("default")
	patched, err := res.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}, "scale")
	if err != nil || jsonString(patched.Object["spec"]) != `{"replicas":3}` {
		t.Errorf("merge patch of scale: %v (%v)", err, patched)
	}
	_, err = k.getScale(ctx, ts.client, "default", "missing")
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: gr + ` "missing" not found`})
}
