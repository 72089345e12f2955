// Package builtin gives the schema of every built-in Kubernetes kind, read
// from the k8s.io/api Go types' struct tags, by apiVersion and kind. It is a
// package of its own so that importing the schema package does not pull in
// every API group.
package builtin

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	strataschema "github.com/stratadev/strata/schema"
)

// ForKind returns the schema of a built-in kind ("apps/v1", "Deployment"),
// and false for kinds Kubernetes does not build in.
func ForKind(apiVersion, kind string) (strataschema.Type, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" {
		return nil, false
	}
	t, ok := scheme.Scheme.AllKnownTypes()[gv.WithKind(kind)]
	if !ok {
		return nil, false
	}
	return strataschema.ForGoType(t), true
}

// GoType returns the Go type registered for a built-in kind.
func GoType(apiVersion, kind string) (reflect.Type, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	t, ok := scheme.Scheme.AllKnownTypes()[gv.WithKind(kind)]
	return t, ok
}
