package openapi

import (
	"bytes"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/dynamic"
	explainv2 "k8s.io/kubectl/pkg/explain/v2"
)

// These tests read the documents with the clients that read kube-apiserver's:
// client-go's discovery client, cli-runtime's field-validation verifier and
// kubectl explain's renderer.

func TestOpenAPIV2Protobuf(t *testing.T) {
	dc, _ := testServer(t, testService(t))
	doc, err := dc.OpenAPISchema() // asks for the protobuf flavour
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	defs := map[string]*openapi_v2.Schema{}
	for _, named := range doc.GetDefinitions().GetAdditionalProperties() {
		defs[named.GetName()] = named.GetValue()
	}
	tests := []struct {
		definition string
		gvk        string // YAML of the x-kubernetes-group-version-kind extension, in part
	}{
		{"io.k8s.api.apps.v1.Deployment", "group: apps\n  kind: Deployment\n  version: v1"},
		{"io.k8s.api.core.v1.Pod", "group: \"\"\n  kind: Pod\n  version: v1"},
		{"io.k8s.api.core.v1.Namespace", "kind: Namespace"},
		{"io.k8s.api.batch.v1.Job", "group: batch\n  kind: Job"},
		{"io.k8s.api.rbac.v1.Role", "group: rbac.authorization.k8s.io\n  kind: Role"},
		{"io.k8s.api.autoscaling.v1.Scale", "group: autoscaling\n  kind: Scale"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.Status", "kind: Status"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "kind: DeleteOptions"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", "kind: WatchEvent"},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", ""},
	}
	for _, tt := range tests {
		t.Run(tt.definition, func(t *testing.T) {
			def, ok := defs[tt.definition]
			if !ok {
				t.Fatalf("definition missing")
			}
			var gvk string
			for _, ext := range def.GetVendorExtension() {
				if ext.GetName() == gvkExtensionKey {
					gvk = ext.GetValue().GetYaml()
				}
			}
			if !strings.Contains(gvk, tt.gvk) {
				t.Errorf("%s = %q, want it to contain %q", gvkExtensionKey, gvk, tt.gvk)
			}
		})
	}
	for name := range defs {
		if strings.HasPrefix(name, "io.k8s.api.networking.") || strings.HasPrefix(name, "io.k8s.api.apps.v1.DaemonSet") {
			t.Errorf("definition %s is not reachable from the served kinds", name)
		}
	}
}

func TestOpenAPIV3Documents(t *testing.T) {
	dc, _ := testServer(t, testService(t))
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatalf("Paths: %v", err)
	}
	for _, want := range []string{"api", "api/v1", "apis", "apis/apps", "apis/apps/v1", "apis/batch/v1", "apis/rbac.authorization.k8s.io/v1"} {
		if _, ok := paths[want]; !ok {
			t.Errorf("Paths() lacks %q (has %v)", want, paths)
		}
	}
	for _, unserved := range []string{"apis/networking.k8s.io/v1", "apis/apps/v1beta1"} {
		if _, ok := paths[unserved]; ok {
			t.Errorf("Paths() lists unserved %q", unserved)
		}
	}

	doc := v3Doc(t, dc, "apis/apps/v1")
	tests := []struct {
		definition, field string
		extensions        map[string]interface{}
	}{
		{"io.k8s.api.apps.v1.Deployment", "spec.template.spec.containers", map[string]interface{}{
			"x-kubernetes-patch-merge-key": "name",
			"x-kubernetes-patch-strategy":  "merge",
			"x-kubernetes-list-type":       "map",
		}},
		{"io.k8s.api.apps.v1.Deployment", "spec.template.spec.containers", nil},
		{"io.k8s.api.apps.v1.Deployment", "metadata.ownerReferences", map[string]interface{}{
			"x-kubernetes-patch-merge-key": "uid",
		}},
		{"io.k8s.api.apps.v1.Deployment", "spec.replicas", nil},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			p := property(t, doc, tt.definition, tt.field)
			for k, want := range tt.extensions {
				if got := p.Extensions[k]; got != want {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
		})
	}
	if gvks, _ := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"].Extensions[gvkExtensionKey].([]interface{}); len(gvks) != 1 {
		t.Errorf("Deployment %s = %v, want one apps/v1 entry", gvkExtensionKey, gvks)
	}
	// Like kube-apiserver's, a group-version document lists the kinds every
	// group registers only for itself and core v1.
	gvks, _ := doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"].Extensions[gvkExtensionKey].([]interface{})
	if len(gvks) != 2 {
		t.Errorf("DeleteOptions %s = %v, want core/v1 and apps/v1", gvkExtensionKey, gvks)
	}
	if _, ok := doc.Components.Schemas["io.k8s.api.batch.v1.Job"]; ok {
		t.Errorf("apps/v1 document holds batch/v1 Job")
	}

	// The protobuf flavour, which client-go's cached OpenAPI clients ask for.
	pb, err := paths["apis/apps/v1"].Schema("application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
	if err != nil || len(pb) == 0 || bytes.HasPrefix(pb, []byte("{")) {
		t.Errorf("protobuf v3 document: %d bytes, err %v", len(pb), err)
	}
}

func TestFieldValidationVerifier(t *testing.T) {
	dc, cfg := testServer(t, testService(t))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	verifier := resource.NewQueryParamVerifierV3(dyn, dc.OpenAPIV3(), resource.QueryParamFieldValidation)
	tests := []struct {
		gvk       schema.GroupVersionKind
		supported bool
	}{
		{gvk("apps", "v1", "Deployment"), true},
		{gvk("", "v1", "ConfigMap"), true},
		{gvk("", "v1", "Pod"), true},
		{gvk("", "v1", "Namespace"), true},
		{gvk("batch", "v1", "Job"), true},
		{gvk("rbac.authorization.k8s.io", "v1", "Role"), true},
		{gvk("apps", "v1", "DaemonSet"), false}, // not served
	}
	for _, tt := range tests {
		t.Run(tt.gvk.String(), func(t *testing.T) {
			err := verifier.HasSupport(tt.gvk)
			if (err == nil) != tt.supported {
				t.Errorf("HasSupport = %v, want supported %v", err, tt.supported)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	dc, _ := testServer(t, testService(t))
	tests := []struct {
		gvr   schema.GroupVersionResource
		field string
		want  []string
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "spec.replicas",
			[]string{"GROUP:      apps", "KIND:       Deployment", "FIELD: replicas <integer>"}},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "spec.template.spec.containers",
			[]string{"FIELD: containers <[]Container>", "image\t<string>"}},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "data",
			[]string{"KIND:       ConfigMap", "FIELD: data <map[string]string>"}},
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "spec.finalizers",
			[]string{"KIND:       Namespace", "FIELD: finalizers <[]string>"}},
		{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, "spec.backoffLimit",
			[]string{"KIND:       Job", "<integer>"}},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, "",
			[]string{"KIND:       Role", "rules\t<[]PolicyRule>"}},
	}
	for _, tt := range tests {
		t.Run(tt.gvr.Resource+"."+tt.field, func(t *testing.T) {
			var fields []string
			if tt.field != "" {
				fields = strings.Split(tt.field, ".")
			}
			var out bytes.Buffer
			// What kubectl explain's Run calls (k8s.io/kubectl/pkg/cmd/explain).
			if err := explainv2.PrintModelDescription(fields, &out, dc.OpenAPIV3(), tt.gvr, false, 0, "plaintext"); err != nil {
				t.Fatalf("PrintModelDescription: %v", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}
