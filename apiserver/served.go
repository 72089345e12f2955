package apiserver

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// served is the set of resources the server answers for: the built-in
// kinds and those of established CRDs. It is never changed once published;
// a CRD change builds a new one and swaps it in (install and uninstall in
// crds.go), so a request reads one consistent set without locking.
type served struct {
	resources map[schema.GroupVersionResource]*resource
	byGroup   map[string][]*resource // discovery order
	groups    []string               // API groups in discovery order ("" first)
}

func newServed() *served {
	return &served{resources: map[schema.GroupVersionResource]*resource{}, byGroup: map[string][]*resource{}}
}

// add appends a resource (replacing one of the same group-version-resource).
func (sv *served) add(r *resource) {
	gvr := r.kind.GroupVersionResource()
	if old := sv.resources[gvr]; old != nil {
		sv.remove(gvr)
	}
	sv.resources[gvr] = r
	group := r.kind.GVK.Group
	if _, seen := sv.byGroup[group]; !seen {
		sv.groups = append(sv.groups, group)
	}
	sv.byGroup[group] = append(sv.byGroup[group], r)
}

// remove drops a resource, and its group when it was the last.
func (sv *served) remove(gvr schema.GroupVersionResource) {
	r := sv.resources[gvr]
	if r == nil {
		return
	}
	delete(sv.resources, gvr)
	group := r.kind.GVK.Group
	rest := make([]*resource, 0, len(sv.byGroup[group]))
	for _, other := range sv.byGroup[group] {
		if other != r {
			rest = append(rest, other)
		}
	}
	if len(rest) > 0 {
		sv.byGroup[group] = rest
		return
	}
	delete(sv.byGroup, group)
	groups := make([]string, 0, len(sv.groups))
	for _, g := range sv.groups {
		if g != group {
			groups = append(groups, g)
		}
	}
	sv.groups = groups
}

// clone copies the set for a change.
func (sv *served) clone() *served {
	c := newServed()
	for _, g := range sv.groups {
		for _, r := range sv.byGroup[g] {
			c.add(r)
		}
	}
	return c
}

// lookup finds the resource of a request.
func (sv *served) lookup(gvr schema.GroupVersionResource) (*resource, bool) {
	r, ok := sv.resources[gvr]
	return r, ok
}
