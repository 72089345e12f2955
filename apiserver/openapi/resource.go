package openapi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Resource is one served resource, as the server's registry knows it.
type Resource struct {
	// GVK is the kind the resource serves, e.g. apps/v1 Deployment. Its group
	// and version decide the document the resource is described in.
	GVK schema.GroupVersionKind
	// Plural is the resource name in URLs, e.g. "deployments".
	Plural string
	// Namespaced puts the paths under /namespaces/{namespace}/.
	Namespaced bool
	// Verbs are the Kubernetes verbs served on the resource: get, list, watch,
	// create, update, patch, delete, deletecollection.
	Verbs []string
	// Subresources are the served subresources; see KnownSubresources.
	Subresources []string
	// ListKind is the kind of a list response; empty means GVK.Kind+"List".
	ListKind string
	// DeleteReturnsObject documents DELETE as returning the deleted object
	// instead of a Status, as kube-apiserver does for pods, namespaces,
	// services and the other stores with ReturnDeletedObject set.
	DeleteReturnsObject bool
}

// Verbs, in the order kube-apiserver's discovery lists them.
var knownVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// actionsOfVerb maps a Kubernetes verb to the x-kubernetes-action values of
// the routes k8s.io/apiserver's installer registers for it. The deprecated
// watch routes (/watch/...) are "watch" and "watchlist"; "watchlist" also
// needs "list", as in the installer.
var actionsOfVerb = map[string][]string{
	"get":              {"get"},
	"list":             {"list"},
	"watch":            {"watch", "watchlist"},
	"create":           {"post"},
	"update":           {"put"},
	"patch":            {"patch"},
	"delete":           {"delete"},
	"deletecollection": {"deletecollection"},
}

// subresource describes a subresource this package knows how to document.
type subresource struct {
	verbs []string
	// kind is the kind the subresource reads and writes, given its parent's.
	kind func(parent schema.GroupVersionKind) schema.GroupVersionKind
}

var scaleGVK = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// knownSubresources are the subresources Resource.Subresources may name, with
// the verbs and kinds kube-apiserver serves them with.
var knownSubresources = map[string]subresource{
	"status": {
		verbs: []string{"get", "patch", "update"},
		kind:  func(parent schema.GroupVersionKind) schema.GroupVersionKind { return parent },
	},
	"scale": {
		verbs: []string{"get", "patch", "update"},
		kind:  func(schema.GroupVersionKind) schema.GroupVersionKind { return scaleGVK },
	},
	// Writes of the object through a strategy of their own.
	"approval":            parentKind("get", "patch", "update"),
	"ephemeralcontainers": parentKind("get", "patch", "update"),
	"resize":              parentKind("get", "patch", "update"),
	"finalize":            parentKind("update"),
}

// parentKind is a subresource that reads and writes its parent's kind.
func parentKind(verbs ...string) subresource {
	return subresource{verbs: verbs, kind: func(parent schema.GroupVersionKind) schema.GroupVersionKind { return parent }}
}

// KnownSubresources returns the subresource names Resource.Subresources may
// contain, sorted.
func KnownSubresources() []string {
	names := make([]string, 0, len(knownSubresources))
	for name := range knownSubresources {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// listKind returns the list kind, defaulted.
func (r Resource) listKind() string {
	if r.ListKind != "" {
		return r.ListKind
	}
	return r.GVK.Kind + "List"
}

func (r Resource) has(verb string) bool { return slices.Contains(r.Verbs, verb) }

// allowsAction reports whether a route with the given x-kubernetes-action
// belongs to one of the resource's verbs.
func (r Resource) allowsAction(action string) bool {
	if action == "watchlist" {
		return r.has("watch") && r.has("list")
	}
	for _, verb := range r.Verbs {
		if slices.Contains(actionsOfVerb[verb], action) {
			return true
		}
	}
	return false
}

// validate checks the resource on its own; cross-resource checks (duplicate
// plurals, known kinds) are done where the group-version is assembled.
// Names are checked strictly because they become go-restful route paths, and
// go-restful exits the process on a path it cannot parse.
func (r Resource) validate() error {
	if r.GVK.Version == "" || r.GVK.Kind == "" {
		return fmt.Errorf("GVK %q needs a version and a kind", r.GVK)
	}
	if err := validateKind(r.GVK.Kind); err != nil {
		return err
	}
	if r.GVK.Group != "" {
		if errs := validation.IsDNS1123Subdomain(r.GVK.Group); len(errs) > 0 {
			return fmt.Errorf("group %q: %s", r.GVK.Group, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1035Label(r.GVK.Version); len(errs) > 0 {
		return fmt.Errorf("version %q: %s", r.GVK.Version, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(r.Plural); len(errs) > 0 {
		return fmt.Errorf("plural %q: %s", r.Plural, strings.Join(errs, "; "))
	}
	if len(r.Verbs) == 0 {
		return fmt.Errorf("no verbs")
	}
	for _, verb := range r.Verbs {
		if _, ok := actionsOfVerb[verb]; !ok {
			return fmt.Errorf("unknown verb %q (known: %s)", verb, strings.Join(knownVerbs, ", "))
		}
	}
	for _, name := range r.Subresources {
		if _, ok := knownSubresources[name]; !ok {
			return fmt.Errorf("unknown subresource %q (known: %s)", name, strings.Join(KnownSubresources(), ", "))
		}
	}
	if seen := duplicate(r.Subresources); seen != "" {
		return fmt.Errorf("subresource %q listed twice", seen)
	}
	return nil
}

// duplicate returns a value that occurs twice in values, or "".
func duplicate(values []string) string {
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if seen[v] {
			return v
		}
		seen[v] = true
	}
	return ""
}

// validateKind checks a kind name as k8s.io/apiextensions-apiserver checks the
// kind of a custom resource.
func validateKind(kind string) error {
	if errs := validation.IsDNS1035Label(strings.ToLower(kind)); len(errs) > 0 {
		return fmt.Errorf("kind %q: %s", kind, strings.Join(errs, "; "))
	}
	return nil
}
