package controllers

// Tests of the garbage collector: what happens to dependents after their
// owner is deleted with each propagation policy, through client-go
// against an API over embedded etcd with the controllers on its loopback
// client, as the server runs them (startAPI). The collector works
// asynchronously, so the tests poll with a deadline.

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
)

// gcDeadline bounds each wait: a custom resource's owner is seen once the
// collector's discovery sync (30 s) or its lookups find the kind.
const gcDeadline = 3 * GarbageCollectorSyncPeriod

type gcServer struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	crds    apiextensionsclient.Interface
}

func startGCServer(t *testing.T) *gcServer {
	t.Helper()
	sel, err := ParseSelection(DefaultSelection)
	if err != nil {
		t.Fatal(err)
	}
	cfg := startAPI(t, sel)
	return &gcServer{client: kubernetes.NewForConfigOrDie(cfg), dynamic: dynamic.NewForConfigOrDie(cfg),
		crds: apiextensionsclient.NewForConfigOrDie(cfg)}
}

func ownedBy(owners ...metav1.Object) []metav1.OwnerReference {
	var refs []metav1.OwnerReference
	for _, o := range owners {
		refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.GetName(), UID: o.GetUID()})
	}
	return refs
}

func createCM(t *testing.T, cms typedcorev1.ConfigMapInterface, name string, finalizers []string, owners []metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Finalizers: finalizers, OwnerReferences: owners}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// gone reports whether the configmap no longer exists.
func gone(cms typedcorev1.ConfigMapInterface, name string) func() (bool, error) {
	return func() (bool, error) {
		_, err := cms.Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
}

func deleteCM(t *testing.T, cms typedcorev1.ConfigMapInterface, name string, policy metav1.DeletionPropagation) {
	t.Helper()
	if err := cms.Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		t.Fatal(err)
	}
}

func TestGarbageCollector(t *testing.T) {
	s := startGCServer(t)
	ctx := context.Background()
	// The CRD first: the collector takes its kind in while the other
	// cases run.
	crd := createWidgetCRD(t, s)
	cms := s.client.CoreV1().ConfigMaps("default")

	t.Run("background", func(t *testing.T) {
		owner := createCM(t, cms, "bg-owner", nil, nil)
		createCM(t, cms, "bg-dependent", nil, ownedBy(owner))
		deleteCM(t, cms, "bg-owner", metav1.DeletePropagationBackground)
		waitWithin(t, gcDeadline, "the dependent is deleted", gone(cms, "bg-dependent"))
	})

	t.Run("background across kinds", func(t *testing.T) {
		// No Deployment controller runs: the test makes the ReplicaSet.
		labels := map[string]string{"app": "web"}
		spec := appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}
		d, err := s.client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{Selector: spec.Selector, Template: spec.Template}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rss := s.client.AppsV1().ReplicaSets("default")
		if _, err := rss.Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}}, Spec: spec}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.client.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitWithin(t, gcDeadline, "the replica set is deleted", func() (bool, error) {
			_, err := rss.Get(ctx, "web-1", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})

	t.Run("foreground", func(t *testing.T) {
		owner := createCM(t, cms, "fg-owner", nil, nil)
		// The dependent's own finalizer holds it (and so the owner) until
		// the test removes it.
		// blockOwnerDeletion: only such references hold a foreground owner.
		refs := ownedBy(owner)
		refs[0].BlockOwnerDeletion = ptr.To(true)
		createCM(t, cms, "fg-dependent", []string{"example.com/hold"}, refs)
		deleteCM(t, cms, "fg-owner", metav1.DeletePropagationForeground)
		waitWithin(t, gcDeadline, "the dependent is being deleted", func() (bool, error) {
			d, err := cms.Get(ctx, "fg-dependent", metav1.GetOptions{})
			return err == nil && d.DeletionTimestamp != nil, err
		})
		o, err := cms.Get(ctx, "fg-owner", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the owner went before its dependent: %v", err)
		}
		if !slices.Equal(o.Finalizers, []string{metav1.FinalizerDeleteDependents}) || o.DeletionTimestamp == nil {
			t.Errorf("owner: finalizers %q deletionTimestamp %v, want [foregroundDeletion] and set", o.Finalizers, o.DeletionTimestamp)
		}
		if _, err := cms.Patch(ctx, "fg-dependent", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`),
			metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitWithin(t, gcDeadline, "the dependent is deleted", gone(cms, "fg-dependent"))
		waitWithin(t, gcDeadline, "the owner is deleted", gone(cms, "fg-owner"))
	})

	t.Run("orphan", func(t *testing.T) {
		owner := createCM(t, cms, "or-owner", nil, nil)
		other := createCM(t, cms, "or-other", nil, nil)
		createCM(t, cms, "or-dependent", nil, ownedBy(owner, other))
		deleteCM(t, cms, "or-owner", metav1.DeletePropagationOrphan)
		waitWithin(t, gcDeadline, "the owner is deleted", gone(cms, "or-owner"))
		d, err := cms.Get(ctx, "or-dependent", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the orphan: %v", err)
		}
		if want := ownedBy(other); !slices.Equal(d.OwnerReferences, want) {
			t.Errorf("the orphan's ownerReferences %v, want %v", d.OwnerReferences, want)
		}
	})

	t.Run("cycle", func(t *testing.T) {
		a := createCM(t, cms, "cy-a", nil, nil)
		b := createCM(t, cms, "cy-b", nil, ownedBy(a))
		a.OwnerReferences = ownedBy(b)
		if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		deleteCM(t, cms, "cy-a", metav1.DeletePropagationBackground)
		waitWithin(t, gcDeadline, "the other of the cycle is deleted", gone(cms, "cy-b"))
	})

	t.Run("namespace in the foreground", func(t *testing.T) {
		nss := s.client.CoreV1().Namespaces()
		if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fg-ns"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createCM(t, s.client.CoreV1().ConfigMaps("fg-ns"), "inside", nil, nil)
		policy := metav1.DeletePropagationForeground
		if err := nss.Delete(ctx, "fg-ns", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
			t.Fatal(err)
		}
		waitWithin(t, gcDeadline, "the namespace is deleted", func() (bool, error) {
			_, err := nss.Get(ctx, "fg-ns", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})

	t.Run("custom resource owner", func(t *testing.T) {
		widgets := s.dynamic.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "widgets"}).
			Namespace("default")
		w, err := widgets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		createCM(t, cms, "cr-dependent", nil, []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget",
			Name: "w", UID: w.GetUID()}})
		if err := widgets.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitWithin(t, gcDeadline, "the dependent is deleted", gone(cms, "cr-dependent"))
	})
}

func createWidgetCRD(t *testing.T, s *gcServer) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	ctx := context.Background()
	crd, err := s.crds.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitWithin(t, gcDeadline, "the CRD is established", func() (bool, error) {
		c, err := s.crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return established(c), nil
	})
	return crd
}
