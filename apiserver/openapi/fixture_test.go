package openapi

import (
	"net/http/httptest"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// testResources are the resources of the brief: core/v1 Pod, ConfigMap and
// Namespace, apps/v1 Deployment with status and scale, batch/v1 Job and
// rbac/v1 Role.
var testResources = []Resource{
	{GVK: gvk("", "v1", "Pod"), Plural: "pods", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}, DeleteReturnsObject: true},
	{GVK: gvk("", "v1", "ConfigMap"), Plural: "configmaps", Namespaced: true, Verbs: allVerbs},
	{GVK: gvk("", "v1", "Namespace"), Plural: "namespaces", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}, Subresources: []string{"status"}, DeleteReturnsObject: true},
	{GVK: gvk("apps", "v1", "Deployment"), Plural: "deployments", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status", "scale"}},
	{GVK: gvk("batch", "v1", "Job"), Plural: "jobs", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}},
	{GVK: gvk("rbac.authorization.k8s.io", "v1", "Role"), Plural: "roles", Namespaced: true, Verbs: allVerbs},
}

var shared struct {
	once sync.Once
	svc  *Service
	err  error
}

// testService returns the Service of testResources, built once per test
// binary (building the generated definitions takes most of a second).
func testService(t testing.TB) *Service {
	t.Helper()
	shared.once.Do(func() {
		shared.svc, shared.err = New(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme, testResources)
	})
	if shared.err != nil {
		t.Fatalf("New: %v", shared.err)
	}
	return shared.svc
}

// testServer serves svc over HTTP and returns a discovery client for it.
func testServer(t testing.TB, svc *Service) (*discovery.DiscoveryClient, *rest.Config) {
	t.Helper()
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatalf("discovery client: %v", err)
	}
	return dc, cfg
}
