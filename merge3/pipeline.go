package merge3

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// pipelineIdentity identifies the functions of a Kptfile's pipeline.mutators
// and pipeline.validators lists, as kpt's pipeline merge does:
//
//  1. by name, when every function in all three versions of the list has one;
//  2. else by image without its tag and digest (by exec for a function with
//     exec and no image, as kpt keys them), when no version of the list
//     declares one such key twice;
//  3. else the list is merged whole (identify is nil).
//
// For other paths handled is false and the schema decides.
func pipelineIdentity(path []string, lists [3]*yaml.Node) (identify func(*yaml.Node) (string, bool), handled bool) {
	if len(path) != 2 || path[0] != "pipeline" || (path[1] != "mutators" && path[1] != "validators") {
		return nil, false
	}
	allNamed, imagesUnique := true, true
	for _, l := range lists {
		if l == nil {
			continue
		}
		seen := map[string]bool{}
		for _, fn := range l.Content {
			if name := lookup(fn, "name"); name == nil || name.Value == "" {
				allNamed = false
			}
			key := functionKey(fn)
			if seen[key] {
				imagesUnique = false
			}
			seen[key] = true
		}
	}
	switch {
	case allNamed:
		return func(fn *yaml.Node) (string, bool) { return "name:" + lookup(fn, "name").Value, true }, true
	case imagesUnique:
		return func(fn *yaml.Node) (string, bool) { return functionKey(fn), true }, true
	}
	return nil, true
}

// kptfileIdentity names the fields of a Kptfile that say which package it is
// and where it comes from: apiVersion, kind, metadata.name,
// metadata.namespace, upstream and upstreamLock. They are local's, never
// merged: upstream's values describe the upstream package itself (its own
// name, its own upstream when it is a blueprint of another), and pkg update
// rewrites the lock itself. Labels, annotations, info, pipeline and
// inventory merge.
func kptfileIdentity(path []string) bool {
	switch len(path) {
	case 1:
		switch path[0] {
		case "apiVersion", "kind", "upstream", "upstreamLock":
			return true
		}
	case 2:
		return path[0] == "metadata" && (path[1] == "name" || path[1] == "namespace")
	}
	return false
}

// functionKey identifies a function without a name: "image:" and its image
// without tag and digest, or, for a function with no image, "exec:" and its
// exec path.
func functionKey(fn *yaml.Node) string {
	if lookup(fn, "image") == nil {
		if exec := lookup(fn, "exec"); exec != nil {
			return "exec:" + scalar(exec)
		}
	}
	return "image:" + imageKey(fn)
}

// imageKey is a function's image without its tag and digest:
// "gcr.io/kpt-fn/set-labels:v0.1" and "…/set-labels@sha256:…" are both
// "gcr.io/kpt-fn/set-labels". A registry port ("localhost:5000/fn") is not a
// tag: only a colon after the last slash starts one.
func imageKey(fn *yaml.Node) string {
	img := lookup(fn, "image")
	if img == nil {
		return ""
	}
	s := img.Value
	if at := strings.IndexByte(s, '@'); at >= 0 {
		s = s[:at]
	}
	if colon := strings.LastIndexByte(s, ':'); colon > strings.LastIndexByte(s, '/') {
		s = s[:colon]
	}
	return s
}
