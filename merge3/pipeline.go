package merge3

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// pipelineIdentity identifies the functions of a Kptfile's pipeline.mutators
// and pipeline.validators lists, as kpt's pipeline merge does:
//
//  1. by name, when every function in all three versions of the list has one;
//  2. else by image without its tag and digest, when no version of the list
//     declares one image twice;
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
			img := imageKey(fn)
			if seen[img] {
				imagesUnique = false
			}
			seen[img] = true
		}
	}
	switch {
	case allNamed:
		return func(fn *yaml.Node) (string, bool) { return "name:" + lookup(fn, "name").Value, true }, true
	case imagesUnique:
		return func(fn *yaml.Node) (string, bool) { return "image:" + imageKey(fn), true }, true
	}
	return nil, true
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
