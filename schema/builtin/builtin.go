// Package builtin gives the schema of every built-in Kubernetes kind, read
// from the struct tags of its k8s.io/api Go type as registered in client-go's
// scheme. It is separate from package schema so that only programs that want
// the built-in kinds pay for k8s.io/api.
package builtin

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	strataschema "github.com/stratadev/strata/schema"
)

// ForKind returns the schema of a built-in kind: apiVersion is "v1",
// "apps/v1", "batch/v1", ...; kind is "Pod", "Deployment", .... ok is false
// for a kind client-go does not register.
func ForKind(apiVersion, kind string) (strataschema.Type, bool) {
	group, version := strataschema.ParseAPIVersion(strings.TrimSpace(apiVersion))
	return ForGVK(group, version, kind)
}

// ForGVK is ForKind with the group and version apart.
func ForGVK(group, version, kind string) (strataschema.Type, bool) {
	t, ok := goType(group, version, kind)
	if !ok {
		return nil, false
	}
	return strataschema.ForGoType(t), true
}

// ForObject returns the schema of the built-in kind a decoded object names
// in its apiVersion and kind fields.
func ForObject(doc map[string]any) (strataschema.Type, bool) {
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	return ForKind(apiVersion, kind)
}

// GoType returns the registered Go type of a built-in kind.
func GoType(apiVersion, kind string) (reflect.Type, bool) {
	group, version := strataschema.ParseAPIVersion(strings.TrimSpace(apiVersion))
	return goType(group, version, kind)
}

func goType(group, version, kind string) (reflect.Type, bool) {
	if version == "" || kind == "" || version == runtime.APIVersionInternal {
		return nil, false
	}
	t, ok := scheme.Scheme.AllKnownTypes()[schema.GroupVersionKind{Group: group, Version: version, Kind: kind}]
	return t, ok
}
