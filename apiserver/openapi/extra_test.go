package openapi

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	explainv2 "k8s.io/kubectl/pkg/explain/v2"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

var widgetGV = schema.GroupVersion{Group: "example.com", Version: "v1"}

var widgets = []Resource{{
	GVK: widgetGV.WithKind("Widget"), Plural: "widgets", Namespaced: true,
	Verbs: allVerbs, Subresources: []string{"status", "scale"},
}}

// widgetSchema is a custom resource schema as a CRD layer would pass it.
func widgetSchema(specFields ...string) map[string]spec.Schema {
	specSchema := new(spec.Schema).Typed("object", "")
	for _, f := range specFields {
		specSchema.SetProperty(f, *spec.Int64Property().WithDescription("the " + f))
	}
	s := new(spec.Schema).Typed("object", "").WithDescription("A Widget.").
		SetProperty("apiVersion", *spec.StringProperty()).
		SetProperty("kind", *spec.StringProperty()).
		SetProperty("metadata", *spec.RefSchema(v2RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")).
		SetProperty("spec", *specSchema)
	return map[string]spec.Schema{"Widget": *s}
}

// newService builds a Service of its own, for tests that change it.
func newService(t testing.TB, resources []Resource) *Service {
	t.Helper()
	svc, err := New(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme, resources)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return svc
}

func TestSetGroupVersionCustomResource(t *testing.T) {
	svc := newService(t, testResources)
	dc, cfg := testServer(t, svc)
	if err := svc.SetGroupVersion(widgetGV, widgets, widgetSchema("size")); err != nil {
		t.Fatalf("SetGroupVersion: %v", err)
	}

	doc := v3Doc(t, dc, "apis/example.com/v1")
	widget := doc.Components.Schemas["com.example.v1.Widget"]
	if widget == nil {
		t.Fatalf("no com.example.v1.Widget in %v", doc.Components.Schemas)
	}
	if got := gvkString(firstGVK(widget.Extensions)); got != "example.com/v1/Widget" {
		t.Errorf("Widget %s = %s", gvkExtensionKey, got)
	}
	if ref := resolve(t, doc, property(t, doc, "com.example.v1.Widget", "metadata")); ref.Properties["name"].Type[0] != "string" {
		t.Errorf("metadata does not resolve to ObjectMeta: %v", ref)
	}
	list := doc.Components.Schemas["com.example.v1.WidgetList"]
	if list == nil || list.Properties["items"].Items.Schema.Ref.String() != v3RefPrefix+"com.example.v1.Widget" {
		t.Errorf("generated WidgetList = %+v", list)
	}
	for _, tt := range []struct{ method, path, id string }{
		{"PATCH", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}", "patchExampleComV1NamespacedWidget"},
		{"PUT", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status", "replaceExampleComV1NamespacedWidgetStatus"},
		{"GET", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale", "readExampleComV1NamespacedWidgetScale"},
		{"GET", "/apis/example.com/v1/widgets", "listExampleComV1WidgetForAllNamespaces"},
	} {
		if op := operation(doc, tt.path, tt.method); op == nil || op.OperationId != tt.id {
			t.Errorf("%s %s: operation %v, want %s", tt.method, tt.path, op, tt.id)
		}
	}

	explain(t, dc, widgetGV.WithResource("widgets"), "spec.size", "FIELD: size <integer>")
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := resource.NewQueryParamVerifierV3(dyn, dc.OpenAPIV3(), resource.QueryParamFieldValidation).HasSupport(widgetGV.WithKind("Widget")); err != nil {
		t.Errorf("fieldValidation on Widget: %v", err)
	}

	sw := v2Doc(t, dc)
	def, ok := sw.Definitions["com.example.v1.Widget"]
	metadata := def.Properties["metadata"]
	if !ok || metadata.Ref.String() != v2RefPrefix+"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("v2 Widget definition = %+v", def)
	}
	if _, ok := sw.Paths.Paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]; !ok {
		t.Errorf("v2 document lacks the widget paths")
	}

	// Replacing the group-version changes its document and its hash.
	before := v3URL(t, dc, "apis/example.com/v1")
	if err := svc.SetGroupVersion(widgetGV, widgets, widgetSchema("size", "color")); err != nil {
		t.Fatalf("SetGroupVersion again: %v", err)
	}
	if v3URL(t, dc, "apis/example.com/v1") == before {
		t.Errorf("hash unchanged after replacing the document")
	}
	explain(t, dc, widgetGV.WithResource("widgets"), "spec.color", "FIELD: color <integer>")

	// No resources removes the group-version, and the group with it.
	if err := svc.SetGroupVersion(widgetGV, nil, nil); err != nil {
		t.Fatalf("removing: %v", err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"apis/example.com/v1", "apis/example.com"} {
		if _, ok := paths[gone]; ok {
			t.Errorf("%s still listed", gone)
		}
	}
	if _, ok := v2Doc(t, dc).Definitions["com.example.v1.Widget"]; ok {
		t.Errorf("v2 still defines Widget")
	}
	if _, ok := paths["apis/apps/v1"]; !ok {
		t.Errorf("apps/v1 gone with example.com/v1")
	}
}

func TestSetGroupVersionBuiltin(t *testing.T) {
	svc := newService(t, testResources)
	dc, _ := testServer(t, svc)
	readOnly := []Resource{{GVK: gvk("apps", "v1", "Deployment"), Plural: "deployments", Namespaced: true, Verbs: []string{"get", "list"}}}
	if err := svc.SetGroupVersion(schema.GroupVersion{Group: "apps", Version: "v1"}, readOnly, nil); err != nil {
		t.Fatalf("SetGroupVersion: %v", err)
	}
	doc := v3Doc(t, dc, "apis/apps/v1")
	item := "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
	for _, tt := range []struct {
		method, path string
		present      bool
	}{
		{"GET", item, true},
		{"GET", "/apis/apps/v1/namespaces/{namespace}/deployments", true},
		{"PATCH", item, false},
		{"POST", "/apis/apps/v1/namespaces/{namespace}/deployments", false},
		{"GET", item + "/scale", false},
		{"GET", "/apis/apps/v1/watch/namespaces/{namespace}/deployments", false},
	} {
		if got := operation(doc, tt.path, tt.method) != nil; got != tt.present {
			t.Errorf("%s %s present = %v, want %v", tt.method, tt.path, got, tt.present)
		}
	}
	if _, ok := doc.Components.Schemas["io.k8s.api.autoscaling.v1.Scale"]; ok {
		t.Errorf("Scale still defined without the scale subresource")
	}
}

// TestConcurrentUpdates serves documents while they are replaced; run with
// -race.
func TestConcurrentUpdates(t *testing.T) {
	svc := newService(t, testResources)
	dc, _ := testServer(t, svc)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	// repeat runs step on a goroutine of its own until stop closes or step
	// fails.
	repeat := func(step func() error) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := step(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 3 {
		repeat(func() error {
			if _, err := dc.OpenAPISchema(); err != nil {
				return fmt.Errorf("OpenAPISchema: %w", err)
			}
			paths, err := dc.OpenAPIV3().Paths()
			if err != nil {
				return fmt.Errorf("Paths: %w", err)
			}
			for _, gv := range paths {
				_, _ = gv.Schema("application/json") // may vanish in between
			}
			return nil
		})
	}
	// Warming builds the documents New left unbuilt while they are served
	// and changed.
	repeat(func() error {
		if err := svc.Warm(); err != nil {
			return fmt.Errorf("Warm: %w", err)
		}
		return nil
	})
	for i := range 6 {
		var err error
		if i%2 == 0 {
			err = svc.SetGroupVersion(widgetGV, widgets, widgetSchema("size"))
		} else {
			err = svc.SetGroupVersion(widgetGV, nil, nil)
		}
		if err != nil {
			t.Errorf("SetGroupVersion %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
}

func explain(t *testing.T, dc *discovery.DiscoveryClient, gvr schema.GroupVersionResource, field, want string) {
	t.Helper()
	var out bytes.Buffer
	if err := explainv2.PrintModelDescription(strings.Split(field, "."), &out, dc.OpenAPIV3(), gvr, false, 0, "plaintext"); err != nil {
		t.Fatalf("explain %s.%s: %v", gvr.Resource, field, err)
	}
	if !strings.Contains(out.String(), want) {
		t.Errorf("explain %s.%s lacks %q:\n%s", gvr.Resource, field, want, out.String())
	}
}

func firstGVK(ext spec.Extensions) interface{} {
	gvks, _ := ext[gvkExtensionKey].([]interface{})
	if len(gvks) == 0 {
		return nil
	}
	return gvks[0]
}

// v3URL is the hash URL of a v3 document, which changes with its content.
func v3URL(t *testing.T, dc *discovery.DiscoveryClient, path string) string {
	t.Helper()
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	gv, ok := paths[path]
	if !ok {
		t.Fatalf("no v3 document %q", path)
	}
	return gv.ServerRelativeURL()
}
