package openapi

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/scheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// twentyKinds is about what a small strata server serves at start.
var twentyKinds = append(slices.Clone(testResources),
	Resource{GVK: gvk("", "v1", "Service"), Plural: "services", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}, DeleteReturnsObject: true},
	Resource{GVK: gvk("", "v1", "Secret"), Plural: "secrets", Namespaced: true, Verbs: allVerbs},
	Resource{GVK: gvk("", "v1", "ServiceAccount"), Plural: "serviceaccounts", Namespaced: true, Verbs: allVerbs, DeleteReturnsObject: true},
	Resource{GVK: gvk("", "v1", "Event"), Plural: "events", Namespaced: true, Verbs: allVerbs},
	Resource{GVK: gvk("", "v1", "Node"), Plural: "nodes", Verbs: allVerbs, Subresources: []string{"status"}},
	Resource{GVK: gvk("", "v1", "PersistentVolumeClaim"), Plural: "persistentvolumeclaims", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}, DeleteReturnsObject: true},
	Resource{GVK: gvk("apps", "v1", "ReplicaSet"), Plural: "replicasets", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status", "scale"}},
	Resource{GVK: gvk("apps", "v1", "StatefulSet"), Plural: "statefulsets", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status", "scale"}},
	Resource{GVK: gvk("apps", "v1", "DaemonSet"), Plural: "daemonsets", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}},
	Resource{GVK: gvk("batch", "v1", "CronJob"), Plural: "cronjobs", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}},
	Resource{GVK: gvk("rbac.authorization.k8s.io", "v1", "RoleBinding"), Plural: "rolebindings", Namespaced: true, Verbs: allVerbs},
	Resource{GVK: gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"), Plural: "clusterroles", Verbs: allVerbs},
	Resource{GVK: gvk("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"), Plural: "clusterrolebindings", Verbs: allVerbs},
	Resource{GVK: gvk("networking.k8s.io", "v1", "Ingress"), Plural: "ingresses", Namespaced: true, Verbs: allVerbs, Subresources: []string{"status"}},
	Resource{GVK: gvk("coordination.k8s.io", "v1", "Lease"), Plural: "leases", Namespaced: true, Verbs: allVerbs},
)

// TestNewTwentyKinds builds the documents of twenty-odd kinds, as at server
// start, and reports how long that takes.
func TestNewTwentyKinds(t *testing.T) {
	start := time.Now()
	svc, err := New(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme, twentyKinds)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Logf("New with %d kinds: %v", len(twentyKinds), time.Since(start))
	paths := v3Paths(t, svc)
	for _, r := range twentyKinds {
		if !slices.Contains(paths, strings.TrimPrefix(rootPath(r.GVK.GroupVersion()), "/")) {
			t.Errorf("no v3 document for %v", r.GVK)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme, twentyKinds); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetGroupVersion is the cost of adding a custom resource at run
// time: its v3 document and the whole v2 document are rebuilt.
func BenchmarkSetGroupVersion(b *testing.B) {
	svc, err := New(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme, twentyKinds)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := svc.SetGroupVersion(widgetGV, widgets, widgetSchema("size")); err != nil {
			b.Fatal(err)
		}
	}
}
