package openapi

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// TestSetGroupVersionErrors feeds SetGroupVersion bad input: each must be an
// error naming the problem, and must leave the served documents as they were.
func TestSetGroupVersionErrors(t *testing.T) {
	svc := newService(t, testResources)
	dc, _ := testServer(t, svc)
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	deployment := func(change func(*Resource)) []Resource {
		r := Resource{GVK: apps.WithKind("Deployment"), Plural: "deployments", Namespaced: true, Verbs: allVerbs}
		change(&r)
		return []Resource{r}
	}
	badRef := func(ref string) map[string]spec.Schema {
		s := widgetSchema("size")
		w := s["Widget"]
		w.Properties["spec"].Properties["owner"] = *spec.RefSchema(ref)
		return s
	}
	tests := []struct {
		name      string
		gv        schema.GroupVersion
		resources []Resource
		extra     map[string]spec.Schema
		want      string
	}{
		{"empty plural", apps, deployment(func(r *Resource) { r.Plural = "" }), nil, "plural"},
		{"plural not a DNS label", apps, deployment(func(r *Resource) { r.Plural = "Deployments" }), nil, "plural"},
		{"no verbs", apps, deployment(func(r *Resource) { r.Verbs = nil }), nil, "no verbs"},
		{"unknown verb", apps, deployment(func(r *Resource) { r.Verbs = []string{"get", "proxy"} }), nil, `unknown verb "proxy"`},
		{"unknown subresource", apps, deployment(func(r *Resource) { r.Subresources = []string{"log"} }), nil, `unknown subresource "log"`},
		{"subresource twice", apps, deployment(func(r *Resource) { r.Subresources = []string{"status", "status"} }), nil, "twice"},
		{"no version", apps, deployment(func(r *Resource) { r.GVK.Version = "" }), nil, "needs a version"},
		{"bad kind", apps, deployment(func(r *Resource) { r.GVK.Kind = "Deploy ment" }), nil, "kind"},
		{"kind of another group-version", apps, deployment(func(r *Resource) { r.GVK = gvk("batch", "v1", "Job") }), nil, "is not in apps/v1"},
		{"unknown list kind", apps, deployment(func(r *Resource) { r.ListKind = "Deployments" }), nil, "list kind"},
		{"plural twice", apps, append(deployment(func(*Resource) {}), deployment(func(*Resource) {})...), nil, "listed twice"},
		{"kind unknown to the scheme", widgetGV, widgets, nil, "neither in the scheme nor in the extra definitions"},
		{"extra kind shadows a built-in", apps, deployment(func(*Resource) {}), map[string]spec.Schema{"Deployment": {}}, "the scheme has this kind"},
		{"extra definitions in core", schema.GroupVersion{Version: "v1"}, testResources[:1], map[string]spec.Schema{"Widget": {}}, "core group"},
		{"extra definitions alone", widgetGV, nil, widgetSchema("size"), "without resources"},
		{"group-version without version", schema.GroupVersion{Group: "apps"}, nil, nil, "has no version"},
		{"extra kind not a name", widgetGV, widgets, map[string]spec.Schema{"Widget": {}, "wid get": {}}, `kind "wid get"`},
		{"ref to nothing", widgetGV, widgets, badRef(v2RefPrefix + "com.example.v1.Gadget"), "names no known definition"},
		{"ref in v3 form", widgetGV, widgets, badRef(v3RefPrefix + "io.k8s.api.core.v1.ObjectReference"), "does not start with"},
		{"ref to a URL", widgetGV, widgets, badRef("https://example.com/schema.json"), "does not start with"},
	}
	before := v3Paths(t, svc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := svc.SetGroupVersion(tt.gv, tt.resources, tt.extra)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("SetGroupVersion = %v, want an error containing %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "openapi: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if after := v3Paths(t, svc); !slices.Equal(after, before) {
				t.Errorf("documents changed by a failed call: %v, was %v", after, before)
			}
		})
	}
	// The documents themselves still serve.
	if op := operation(v3Doc(t, dc, "apis/apps/v1"), "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "GET"); op == nil {
		t.Errorf("apps/v1 document changed")
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name      string
		nilDefs   bool
		nilScheme bool
		resources []Resource
		want      string
	}{
		{"no definitions", true, false, testResources, "needs definitions"},
		{"no scheme", false, true, testResources, "needs definitions and a scheme"},
		{"bad resource", false, false, []Resource{{GVK: gvk("", "v1", "Pod"), Plural: "pods"}}, "api/v1: resource \"pods\": no verbs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs, sch := generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme
			if tt.nilDefs {
				defs = nil
			}
			if tt.nilScheme {
				sch = nil
			}
			_, err := New(defs, sch, tt.resources)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func v3Paths(t *testing.T, svc *Service) []string {
	t.Helper()
	return slices.Sorted(maps.Keys(*svc.docs.Load()))
}

// TestBuildErrors makes the builders fail (a definition is missing) after
// the extra definitions are in place: the error must be returned and the
// extra definitions taken back.
func TestBuildErrors(t *testing.T) {
	withoutScale := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		defs := generatedopenapi.GetOpenAPIDefinitions(ref)
		delete(defs, "io.k8s.api.autoscaling.v1.Scale")
		return defs
	}
	lazy, err := New(withoutScale, scheme.Scheme, testResources)
	if err != nil {
		t.Fatalf("New without the Scale definition: %v (its documents are built later)", err)
	}
	if err := lazy.Warm(); err == nil || !strings.Contains(err.Error(), "io.k8s.api.autoscaling.v1.Scale") {
		t.Fatalf("Warm without the Scale definition = %v", err)
	}
	svc, err := New(withoutScale, scheme.Scheme, testResources[:3]) // no scale subresource
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = svc.SetGroupVersion(widgetGV, widgets, widgetSchema("size"))
	if err == nil || !strings.Contains(err.Error(), "apis/example.com/v1") {
		t.Fatalf("SetGroupVersion = %v, want a build error", err)
	}
	if len(svc.defs.extra) != 0 || svc.defs.extraV2["com.example.v1.Widget"].Schema.Type != nil {
		t.Errorf("extra definitions left behind: %v", svc.defs.extra)
	}
	noScale := slices.Clone(widgets)
	noScale[0].Subresources = []string{"status"}
	if err := svc.SetGroupVersion(widgetGV, noScale, widgetSchema("size")); err != nil {
		t.Errorf("SetGroupVersion without scale: %v", err)
	}
}
