package schema_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/stratadev/strata/schema"
)

// The Kubernetes fixtures are the Deployment closure of real published
// documents (descriptions removed): apimachinery's managedfields test swagger
// (OpenAPI v2) and client-go's apps/v1 OpenAPI v3 test document.

// TestKubernetesV2AgreesWithStructTags walks every field of apps/v1
// Deployment and checks that the OpenAPI v2 document and the Go struct tags
// give the same patch metadata.
func TestKubernetesV2AgreesWithStructTags(t *testing.T) {
	doc := loadTestdata(t, "k8s-apps-v1-deployment.swagger.json")
	root, ok := doc.ForGVK("apps", "v1", "Deployment")
	if !ok {
		t.Fatal("no apps/v1 Deployment")
	}
	n := compareWithGo(t, "", reflect.TypeOf(appsv1.Deployment{}), root, map[reflect.Type]bool{},
		func(path string, g, o schema.Field) {
			if g.Strategy != o.Strategy || !slices.Equal(g.MergeKeys, o.MergeKeys) {
				t.Errorf("%s: struct tags say %q %q, OpenAPI v2 says %q %q", path, g.Strategy, g.MergeKeys, o.Strategy, o.MergeKeys)
			}
		})
	if n < 200 {
		t.Errorf("compared only %d fields", n)
	}
	checkFields(t, root, []fieldCase{
		{path: "spec.template.spec.containers", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.template.spec.containers[].env", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.template.spec.containers[].ports", ok: true, strategy: schema.Merge, keys: []string{"containerPort"}},
		{path: "spec.template.spec.volumes", ok: true, strategy: schema.Merge | schema.RetainKeys, keys: []string{"name"}},
		{path: "spec.template.spec.tolerations", ok: true},
		{path: "spec.strategy", ok: true, strategy: schema.RetainKeys},
		{path: "metadata.finalizers", ok: true, strategy: schema.Merge},
		{path: "metadata.ownerReferences", ok: true, strategy: schema.Merge, keys: []string{"uid"}},
	})
}

// TestKubernetesV3AgreesWithStructTags does the same for OpenAPI v3, where
// the list and map topology extensions may add metadata to fields the struct
// tags leave at the default, and nothing else may differ.
func TestKubernetesV3AgreesWithStructTags(t *testing.T) {
	doc := loadTestdata(t, "k8s-apps-v1-deployment.openapi-v3.json")
	root, ok := doc.ForGVK("apps", "v1", "Deployment")
	if !ok {
		t.Fatal("no apps/v1 Deployment")
	}
	var extra []string
	compareWithGo(t, "", reflect.TypeOf(appsv1.Deployment{}), root, map[reflect.Type]bool{},
		func(path string, g, o schema.Field) {
			if g.Strategy == o.Strategy && slices.Equal(g.MergeKeys, o.MergeKeys) {
				return
			}
			if g.Strategy != 0 || len(g.MergeKeys) > 0 {
				t.Errorf("%s: struct tags say %q %q, OpenAPI v3 says %q %q", path, g.Strategy, g.MergeKeys, o.Strategy, o.MergeKeys)
			}
			extra = append(extra, path+" "+o.Strategy.String())
		})
	if len(extra) == 0 {
		t.Error("the v3 topology extensions added nothing")
	}
	t.Logf("from list-type only: %s", strings.Join(extra, "; "))
	checkFields(t, root, []fieldCase{
		// ServicePort-like multi-field list-map keys lose to the explicit key.
		{path: "spec.template.spec.containers[].ports", ok: true, strategy: schema.Merge, keys: []string{"containerPort"}},
		{path: "spec.selector.matchLabels", ok: true},
		{path: "spec.template.spec.containers[].env[].valueFrom.secretKeyRef", ok: true}, // map-type atomic: merged, as kubectl does
	})
}

// knownSkew reports the fields where the fixture documents, older than the
// k8s.io/api this module builds with, have other metadata: apimachinery
// dropped the merge tags of LabelSelectorRequirement.key, and old documents
// lack those of EphemeralContainer.ports.
func knownSkew(path string) bool {
	return strings.HasSuffix(path, "matchExpressions.key") || strings.HasSuffix(path, "ephemeralContainers.ports")
}

// compareWithGo walks the JSON fields of Go type gt alongside schema o,
// calling check for each field, and returns how many it compared.
func compareWithGo(t *testing.T, path string, gt reflect.Type, o schema.Type, seen map[reflect.Type]bool,
	check func(path string, g, o schema.Field)) int {
	for gt.Kind() == reflect.Pointer || gt.Kind() == reflect.Slice || gt.Kind() == reflect.Map {
		gt = gt.Elem()
		if o != nil {
			if next := o.Elem(); next != nil {
				o = next
			}
		}
	}
	if gt.Kind() != reflect.Struct || seen[gt] || o == nil {
		return 0
	}
	seen[gt] = true
	defer delete(seen, gt)
	g := schema.ForGoType(gt)
	n := 0
	for _, name := range jsonNames(gt) {
		gf, _ := g.Field(name)
		of, ok := o.Field(name)
		p := strings.TrimPrefix(path+"."+name, ".")
		if !ok {
			continue // a field newer than the document
		}
		if !knownSkew(p) {
			check(p, gf, of)
		}
		n++
		if ft := fieldType(gt, name); ft != nil {
			n += compareWithGo(t, p, ft, mapValue(ft, of.Type), seen, check)
		}
	}
	return n
}

// mapValue steps from a map schema to its value schema.
func mapValue(ft reflect.Type, o schema.Type) schema.Type {
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() == reflect.Map && o != nil {
		f, _ := o.Field("any-key")
		return f.Type
	}
	return o
}

func jsonNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case name == "-" || !sf.IsExported():
		case name == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct:
			names = append(names, jsonNames(sf.Type)...)
		case name != "":
			names = append(names, name)
		}
	}
	return names
}

func fieldType(t reflect.Type, name string) reflect.Type {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		n, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if n == name {
			return sf.Type
		}
		if n == "" && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			if ft := fieldType(sf.Type, name); ft != nil {
				return ft
			}
		}
	}
	return nil
}
