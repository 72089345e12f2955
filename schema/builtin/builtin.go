// Package builtin gives the schema of every built-in Kubernetes kind, as
// schema.ForGoType reads it from the struct tags of the kind's k8s.io/api Go
// type, for the kinds client-go's scheme registers. It is separate from
// package schema so that only programs that want the built-in kinds pay for
// them.
//
// The kinds and their types come from generated tables (kinds.go and
// types.txt), not from client-go's scheme and the Go types themselves: the
// strata command would otherwise link k8s.io/api and client-go, whose
// initialisers and code cost it milliseconds and megabytes at every start.
// TestKindsTable regenerates the tables from the scheme and fails when the
// committed ones differ; TestTableMatchesGoTypes checks every field of every
// type against schema.ForGoType.
package builtin

import (
	"strings"

	"github.com/stratadev/strata/schema"
)

// ForKind returns the schema of a built-in kind: apiVersion is "v1",
// "apps/v1", "batch/v1", ...; kind is "Pod", "Deployment", .... ok is false
// for a kind client-go does not register.
func ForKind(apiVersion, kind string) (schema.Type, bool) {
	group, version := schema.ParseAPIVersion(strings.TrimSpace(apiVersion))
	return ForGVK(group, version, kind)
}

// ForGVK is ForKind with the group and version apart.
func ForGVK(group, version, kind string) (schema.Type, bool) {
	id, ok := typeID(group, version, kind)
	if !ok {
		return nil, false
	}
	return typeByID(id), true
}

// ForObject returns the schema of the built-in kind a decoded object names
// in its apiVersion and kind fields.
func ForObject(doc map[string]any) (schema.Type, bool) {
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	return ForKind(apiVersion, kind)
}

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

// typeID returns the types.txt id of a kind's type.
func typeID(group, version, kind string) (int, bool) {
	if version == "" || kind == "" {
		return 0, false
	}
	if id, ok := kinds[gvk{group, version, kind}]; ok {
		return id, true
	}
	if group == "" || !groupVersions[[2]string{group, version}] {
		return 0, false
	}
	id, ok := metaKinds[kind]
	return id, ok
}
