package registry

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Strategic merge patch reads how lists merge from x-kubernetes-patch-
// merge-key and x-kubernetes-patch-strategy. apiextensions.k8s.io/v1's
// JSONSchemaProps has no fields for them, so kube-apiserver drops them
// from CRD schemas (with an unknown-field warning) and refuses strategic
// merge patches of custom resources altogether. strata patches custom
// resources strategically, so it keeps these two extensions where a CRD's
// schemas carry them: they are read from the body, stored with the CRD and
// returned, and both the patch engine and the OpenAPI documents see them.

// patchExtensionKeys are the schema keys kept beside the typed CRD.
var patchExtensionKeys = []string{"x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy"}

// schemaExtension is one kept key: where it sits in the CRD object, and
// its value.
type schemaExtension struct {
	path  []string // from the object root; list indexes as decimal strings
	value any
}

// crdBody is a decoded CRD with the patch extensions of its schemas.
type crdBody struct {
	*apiextensionsv1.CustomResourceDefinition
	extensions []schemaExtension
}

func (c *crdBody) DeepCopyObject() runtime.Object {
	return &crdBody{CustomResourceDefinition: c.CustomResourceDefinition.DeepCopy(), extensions: slices.Clone(c.extensions)}
}

// withSchemaExtensions wraps a decoded CRD with the extensions its body
// carries.
func withSchemaExtensions(obj runtime.Object, body []byte) runtime.Object {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return obj
	}
	var content map[string]any
	if err := json.Unmarshal(body, &content); err != nil {
		return obj
	}
	exts := findSchemaExtensions(content)
	if len(exts) == 0 {
		return obj
	}
	return &crdBody{CustomResourceDefinition: crd, extensions: exts}
}

// isKeptSchemaExtension says whether a strict decoding error of a CRD body
// is about a kept extension (unknown field "spec.versions[0]...containers.
// x-kubernetes-patch-merge-key"), which is then no error.
func isKeptSchemaExtension(err error) bool {
	msg := err.Error()
	return slices.ContainsFunc(patchExtensionKeys, func(k string) bool { return strings.HasSuffix(msg, "."+k+`"`) })
}

// unwrapCRD returns the typed CRD and its extensions.
func unwrapCRD(obj runtime.Object) (runtime.Object, []schemaExtension) {
	if c, ok := obj.(*crdBody); ok {
		return c.CustomResourceDefinition, c.extensions
	}
	return obj, nil
}

// findSchemaExtensions collects the patch extensions of every version's
// schema (and of the legacy spec.validation).
func findSchemaExtensions(crd map[string]any) []schemaExtension {
	var out []schemaExtension
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for i, v := range versions {
		vm, _ := v.(map[string]any)
		sch, _ := vm["schema"].(map[string]any)
		if root, ok := sch["openAPIV3Schema"].(map[string]any); ok {
			collectExtensions(root, []string{"spec", "versions", strconv.Itoa(i), "schema", "openAPIV3Schema"}, &out)
		}
	}
	return out
}

func collectExtensions(s map[string]any, path []string, out *[]schemaExtension) {
	for _, k := range patchExtensionKeys {
		if v, ok := s[k]; ok {
			*out = append(*out, schemaExtension{path: append(slices.Clone(path), k), value: v})
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				collectExtensions(pm, append(slices.Clone(path), "properties", name), out)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := s[key].(map[string]any); ok {
			collectExtensions(sub, append(slices.Clone(path), key), out)
		}
	}
}

// restoreSchemaExtensions writes the kept extensions into the stored
// object, where the schema they belong to still exists.
func restoreSchemaExtensions(u *unstructured.Unstructured, exts []schemaExtension) {
	for _, e := range exts {
		parent := lookupPath(u.Object, e.path[:len(e.path)-1])
		if m, ok := parent.(map[string]any); ok {
			m[e.path[len(e.path)-1]] = runtime.DeepCopyJSONValue(e.value)
		}
	}
}

// lookupPath follows map keys and list indexes.
func lookupPath(v any, path []string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// UpdateTyped runs update on the typed object inside a decoded body: a
// CRD's body carries its kept schema extensions beside the typed CRD, and
// code that knows only the typed object (the field manager) works on the
// CRD itself.
func UpdateTyped(obj runtime.Object, update func(runtime.Object) runtime.Object) runtime.Object {
	c, ok := obj.(*crdBody)
	if !ok {
		return update(obj)
	}
	if crd, ok := update(c.CustomResourceDefinition).(*apiextensionsv1.CustomResourceDefinition); ok {
		c.CustomResourceDefinition = crd
	}
	return c
}
