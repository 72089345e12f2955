package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClientCreateInMissingNamespace(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	_, err := ts.client.CoreV1().ConfigMaps("nope").Create(ctx, newConfigMap("x", nil), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound,
		message: `namespaces "nope" not found`, details: &metav1.StatusDetails{Name: "nope", Kind: "namespaces"}})
	_, err = ts.client.AppsV1().Deployments("nope").Create(ctx, newDeployment("x", "nginx:1"), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound,
		message: `namespaces "nope" not found`, details: &metav1.StatusDetails{Name: "nope", Kind: "namespaces"}})
	// Reads of a missing namespace are plain NotFound / empty lists.
	_, err = ts.client.CoreV1().ConfigMaps("nope").Get(ctx, "x", metav1.GetOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "x" not found`})
	list, err := ts.client.CoreV1().ConfigMaps("nope").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("list in a missing namespace: %v, %d items", err, len(list.Items))
	}
}

// namespaceFinalizeTimeout bounds the wait for the background
// finalization of a deleted namespace.
const namespaceFinalizeTimeout = 30 * time.Second

func TestClientNamespaceDeletion(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	nss := ts.client.CoreV1().Namespaces()
	ns, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Status.Phase != corev1.NamespaceActive || !slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) {
		t.Errorf("new namespace: phase %q finalizers %v, want Active [kubernetes]", ns.Status.Phase, ns.Spec.Finalizers)
	}
	cms := ts.client.CoreV1().ConfigMaps("doomed")
	mustCreateConfigMap(t, cms, "plain", nil, nil)
	held := newConfigMap("held", nil)
	held.Finalizers = []string{"example.com/hold"}
	if _, err := cms.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.AppsV1().Deployments("doomed").Create(ctx, newDeployment("web", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var code int
	raw, err := ts.client.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces/doomed").Do(ctx).StatusCode(&code).Raw()
	if err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	var answer corev1.Namespace
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	if code != 200 || answer.Kind != "Namespace" || answer.Name != "doomed" || answer.Status.Phase != corev1.NamespaceTerminating ||
		answer.DeletionTimestamp == nil || !slices.Equal(answer.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) {
		t.Errorf("delete answer: code %d\n%s\nwant 200 with the Namespace, phase Terminating, a deletionTimestamp and finalizer kubernetes", code, raw)
	}

	// Creating in a terminating namespace is forbidden (NamespaceLifecycle).
	// Like kube-apiserver's admission (an informer's lister), strata checks
	// its watch cache: wait until that has seen the deletion.
	eventually(t, 5*time.Second, func() string {
		got, err := nss.Get(ctx, "doomed", metav1.GetOptions{ResourceVersion: "0"})
		if err != nil || got.DeletionTimestamp == nil {
			return fmt.Sprintf("the cache does not show the namespace terminating: %v", err)
		}
		return ""
	})
	_, err = cms.Create(ctx, newConfigMap("late", nil), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 403, reason: metav1.StatusReasonForbidden,
		message: `configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated`,
		details: &metav1.StatusDetails{Name: "late", Kind: "configmaps", Causes: []metav1.StatusCause{{
			Type: corev1.NamespaceTerminatingCause, Message: "namespace doomed is being terminated", Field: "metadata.namespace"}}}})

	// The contents go; the object held by a finalizer is marked for
	// deletion and keeps the namespace. Finalization passes run a second
	// apart and each lists every namespaced resource: on a loaded machine
	// running many test servers, a pass can take seconds.
	eventually(t, namespaceFinalizeTimeout, func() string {
		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		deps, err := ts.client.AppsV1().Deployments("doomed").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 1 || list.Items[0].Name != "held" || list.Items[0].DeletionTimestamp == nil || len(deps.Items) != 0 {
			return fmt.Sprintf("namespace holds configmaps %v and deployments %v, want only held, marked for deletion",
				listNames(t, list), listNames(t, deps))
		}
		return ""
	})
	got, err := nss.Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace while an object holds it: %v, phase %q", err, got.Status.Phase)
	}

	// Releasing the finalizer lets the namespace go.
	cur, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Finalizers = nil
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, namespaceFinalizeTimeout, func() string {
		_, err := nss.Get(ctx, "doomed", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		return fmt.Sprintf("namespace still there (%v)", err)
	})
	// Recreating it gives an empty, active namespace.
	again, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
	if err != nil || again.Status.Phase != corev1.NamespaceActive || again.UID == ns.UID {
		t.Fatalf("recreate: %v, phase %q", err, again.Status.Phase)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("recreated namespace: %v, configmaps %v", err, listNames(t, list))
	}
}
