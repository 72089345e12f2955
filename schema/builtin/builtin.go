// Package builtin gives the schema of every built-in Kubernetes kind, read
// from the struct tags of its k8s.io/api Go type, for the kinds client-go's
// scheme registers. It is separate from package schema so that only programs
// that want the built-in kinds pay for k8s.io/api.
//
// The kinds come from a generated table (kinds.go), not from client-go's
// scheme itself: building that scheme at start-up costs the strata command
// milliseconds and megabytes, and linking it pulls in client-go. A test
// checks the table against the scheme.
package builtin

import (
	"reflect"
	"strings"

	strataschema "github.com/stratadev/strata/schema"
)

// gvk is a group, version and kind: comparable, and spelt in kinds.go
// without importing anything.
type gvk struct{ group, version, kind string }

// groupVersions are the group versions of the kinds table.
var groupVersions = func() map[[2]string]bool {
	gvs := map[[2]string]bool{}
	for k := range kinds {
		gvs[[2]string{k.group, k.version}] = true
	}
	return gvs
}()

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
	if version == "" || kind == "" {
		return nil, false
	}
	if t, ok := kinds[gvk{group, version, kind}]; ok {
		return t, true
	}
	if group == "" || !groupVersions[[2]string{group, version}] {
		return nil, false
	}
	t, ok := metaKinds[kind]
	return t, ok
}
