package schema_test

import (
	"testing"

	"github.com/stratadev/strata/schema"
)

func TestCRDFields(t *testing.T) {
	doc := loadTestdata(t, "crd.yaml")
	if doc.Format != schema.CRD {
		t.Fatalf("format %v", doc.Format)
	}
	want := []schema.GVK{
		{Group: "legacy.example.com", Version: "v1alpha1", Kind: "Gizmo"},
		{Group: "stable.example.com", Version: "v1", Kind: "CronTab"},
		{Group: "stable.example.com", Version: "v2", Kind: "CronTab"},
	}
	if got := doc.Kinds(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	root, ok := doc.ForGVK("stable.example.com", "v1", "CronTab")
	if !ok {
		t.Fatal("no root type")
	}
	if byName, _ := doc.ByName("com.example.stable.v1.CronTab"); byName != root {
		t.Error("ByName and ForGVK disagree")
	}
	checkFields(t, root, []fieldCase{
		{path: "spec.ports", ok: true, strategy: schema.Merge, keys: []string{"containerPort", "protocol"}},
		{path: "spec.ports[].name", ok: true},
		{path: "spec.containers", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.containers[].env", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.hosts", ok: true, strategy: schema.Merge},
		{path: "spec.command", ok: true},
		{path: "spec.annotations.a", ok: true},
		{path: "spec.template.anything", ok: true, noType: true},
		{path: "spec.nodeSelector", ok: true}, // map-type atomic is not obeyed
		{path: "metadata.labels", ok: true, noType: true},
		{path: "spec.unknown", ok: false},
		{path: "status", ok: false},
	})
	if _, ok := doc.ForGVK("stable.example.com", "v1beta1", "CronTab"); ok {
		t.Error("a version that is not served has a root type")
	}
	v2, _ := doc.ForGVK("stable.example.com", "v2", "CronTab")
	checkFields(t, v2, []fieldCase{{path: "spec", ok: true, noType: true}})
	gizmo, _ := doc.ForGVK("legacy.example.com", "v1alpha1", "Gizmo")
	checkFields(t, gizmo, []fieldCase{{path: "spec.items", ok: true, strategy: schema.Merge, keys: []string{"id"}}})
}

func TestCRDList(t *testing.T) {
	doc, err := schema.Load("crds.json", []byte(`{"apiVersion": "v1", "kind": "List", "items": [
		{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		 "spec": {"group": "g.io", "names": {"kind": "K"}, "versions": [{"name": "v1", "served": true,
		   "schema": {"openAPIV3Schema": {"properties": {"s": {"type": "array",
		     "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}}}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	root, ok := doc.ForGVK("g.io", "v1", "K")
	if !ok {
		t.Fatal("no root type")
	}
	checkFields(t, root, []fieldCase{{path: "s", ok: true, strategy: schema.Merge}})
}

func TestCRDErrors(t *testing.T) {
	const head = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
	checkErrors(t, []errorCase{
		{name: "no group", doc: head + `spec: {names: {kind: K}, versions: []}`,
			want: `schema.yaml: spec.group: required`},
		{name: "no spec", doc: head,
			want: `schema.yaml: spec: required`},
		{name: "bad list type", doc: head + `
spec:
  group: g.io
  names: {kind: K}
  versions:
    - name: v1
      served: true
      schema:
        openAPIV3Schema:
          properties:
            l: {type: array, x-kubernetes-list-type: bag}`,
			want: `schema.yaml: spec.versions[0].schema.openAPIV3Schema.properties.l: x-kubernetes-list-type "bag": want atomic, set or map`},
		{name: "ref in a CRD", doc: head + `
spec:
  group: g.io
  names: {kind: K}
  versions: [{name: v1, served: true, schema: {openAPIV3Schema: {$ref: "#/x"}}}]`,
			want: `schema.yaml: spec.versions[0].schema.openAPIV3Schema.$ref: "#/x": references are not allowed here`},
		{name: "served not a bool", doc: head + `
spec:
  group: g.io
  names: {kind: K}
  versions: [{name: v1, served: "yes"}]`,
			want: `schema.yaml: spec.versions[0].served: must be a boolean, not a string`},
		{name: "duplicate version", doc: head + `
spec:
  group: g.io
  names: {kind: K}
  versions: [{name: v1}, {name: v1}]`,
			want: `schema.yaml: spec.versions[1]: g.io/v1, Kind=K is defined twice`},
		{name: "second document", doc: head + `
spec: {group: g.io, names: {kind: K}, versions: [{name: v1}]}
---
apiVersion: v1
kind: ConfigMap`,
			want: `schema.yaml: [1].kind: "ConfigMap": want CustomResourceDefinition`},
		{name: "wrong apiVersion", doc: `
apiVersion: v1
kind: CustomResourceDefinition
spec: {group: g.io, names: {kind: K}, versions: [{name: v1}]}`,
			want: `schema.yaml: apiVersion: "v1": want apiextensions.k8s.io/v1`},
	})
}
