package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// gadgetsCRD is a small CRD for the registry's own tests: a list keyed by
// two fields, a merge-key list (an extension JSONSchemaProps has no field
// for), a default and limits.
const gadgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1, default: 1}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  required: [port, protocol]
                  properties: {port: {type: integer}, protocol: {type: string}}
              containers:
                type: array
                x-kubernetes-patch-merge-key: name
                x-kubernetes-patch-strategy: merge
                items: {type: object, properties: {name: {type: string}}}
`

// gadgetKind decodes gadgetsCRD as the CRD kind does (keeping the patch
// extensions) and builds its custom kind.
func gadgetKind(t testing.TB) *Kind {
	t.Helper()
	body, err := yaml.YAMLToJSON([]byte(gadgetsCRD))
	if err != nil {
		t.Fatal(err)
	}
	crdKind := kindOf(t, "customresourcedefinitions")
	obj, warnings, err := crdKind.Decode(body, FieldValidationStrict)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("decoding the CRD: %v %q", err, warnings)
	}
	stored, err := crdKind.PrepareCreate(crdKind.Context(context.Background(), "", "create", "", nil), obj, nil)
	if err != nil {
		t.Fatalf("preparing the CRD: %v", err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtimeFromUnstructured(stored.Unstructured, crd); err != nil {
		t.Fatal(err)
	}
	kinds, err := CustomKinds(crd, stored.Object, nil)
	if err != nil || len(kinds) != 1 {
		t.Fatalf("CustomKinds: %d kinds, %v", len(kinds), err)
	}
	return kinds[0]
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// TestPreparedProtobufOfCRD: a CRD whose schema has extensions (which
// only the stored, unstructured object keeps) is answered in protobuf from
// its typed object as it would be from the stored one: the protobuf CRD
// has no field for them.
func TestPreparedProtobufOfCRD(t *testing.T) {
	body, err := yaml.YAMLToJSON([]byte(gadgetsCRD))
	if err != nil {
		t.Fatal(err)
	}
	crdKind := kindOf(t, "customresourcedefinitions")
	obj, _, err := crdKind.Decode(body, FieldValidationStrict)
	if err != nil {
		t.Fatal(err)
	}
	prepared, err := crdKind.PrepareCreate(crdKind.Context(context.Background(), "", "create", "", nil), obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(prepared.Object), "x-kubernetes-patch-merge-key") {
		t.Fatalf("the stored CRD lost its schema extensions: %v", prepared.Object)
	}
	prepared.SetResourceVersion("42")
	want, err := crdKind.ProtobufMessage(prepared.Object)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := prepared.ProtobufOf("42")
	if err != nil || !ok || !bytes.Equal(got, want) {
		t.Errorf("ProtobufOf: ok %v, err %v, equal %v", ok, err, bytes.Equal(got, want))
	}
}

// TestCustomKindPatchSchema: the kept x-kubernetes-patch-merge-key and the
// list-map keys reach the strategic merge patch schema.
func TestCustomKindPatchSchema(t *testing.T) {
	k := gadgetKind(t)
	typ, ok, err := k.PatchSchema()
	if err != nil || !ok {
		t.Fatalf("PatchSchema: %v %v", ok, err)
	}
	spec, ok := typ.Field("spec")
	if !ok {
		t.Fatal("no spec")
	}
	for name, wantKeys := range map[string]string{"ports": "port,protocol", "containers": "name"} {
		f, ok := spec.Type.Field(name)
		if !ok {
			t.Fatalf("no spec.%s", name)
		}
		if got := strings.Join(f.MergeKeys, ","); got != wantKeys {
			t.Errorf("spec.%s merge keys %q, want %q", name, got, wantKeys)
		}
	}
}

// FuzzCustomResourceDecode feeds arbitrary bodies to a custom kind's
// decoding and create preparation: errors are fine, panics are not, and a
// decoded object always has the kind's apiVersion and kind.
func FuzzCustomResourceDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":2,"ports":[{"port":1,"protocol":"TCP"}]}}`,
		`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g","x":1},"spec":{"size":"big","bogus":[1]},"status":null}`,
		`{"kind":"Gadget","metadata":{"name":"g"},"spec":{"size":1,"size":2}}`,
		`{"apiVersion":"v1","kind":"Pod"}`, `[]`, `null`, `{"metadata":"x"}`,
	} {
		f.Add([]byte(seed), uint8(0))
	}
	k := gadgetKind(f)
	modes := []FieldValidation{FieldValidationStrict, FieldValidationWarn, FieldValidationIgnore}
	f.Fuzz(func(t *testing.T, body []byte, mode uint8) {
		obj, _, err := k.Decode(body, modes[int(mode)%len(modes)])
		if err != nil {
			return
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetAPIVersion() != "example.com/v1" || u.GetKind() != "Gadget" {
			t.Fatalf("decoded %T %v", obj, obj.GetObjectKind().GroupVersionKind())
		}
		_, _ = k.PrepareCreate(k.Context(context.Background(), "default", "create", "", nil), obj, nil)
	})
}
