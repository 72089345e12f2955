package openapi

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Service serves /openapi/v2 and /openapi/v3 (with /openapi/v3/api/v1,
// /openapi/v3/apis/{group}/{version} and the discovery documents api, apis and
// apis/{group}) for a set of resources. It is safe for concurrent use:
// documents can be replaced with SetGroupVersion while they are served.
type Service struct {
	scheme     *runtime.Scheme
	serializer runtime.NegotiatedSerializer
	info       spec.InfoProps

	// mu serialises changes; defsMu, taken inside mu when both are,
	// serialises every use of defs (see definitions): the builds of changes
	// and the lazy builds of New's documents.
	mu        sync.Mutex
	defsMu    sync.Mutex
	defs      *definitions
	gvs       map[schema.GroupVersion]*groupVersion
	discovery map[string]*routeContainer // v3 document path → routes

	v2           *handler.OpenAPIService
	v2Generation int // under mu; the ETag source of lazily built v2 documents
	v3           *handler3.OpenAPIService
	// docs are the served v3 documents by path, read without mu: each
	// change replaces the map, never changes it.
	docs atomic.Pointer[map[string]cached.Value[*spec3.OpenAPI]]
	mux  *http.ServeMux
}

// groupVersion is what the service keeps of one served group-version.
type groupVersion struct {
	resources []Resource
	extra     []string // names of its extra definitions
	routes    *routeContainer
}

// Option changes a default of New.
type Option func(*Service)

// WithInfo sets the info object of the documents; the default is title
// "Kubernetes" (as kube-apiserver's) and version "unversioned". kube-apiserver
// puts its binary version there, e.g. "v1.37.2".
func WithInfo(title, version string) Option {
	return func(s *Service) { s.info = spec.InfoProps{Title: title, Version: version} }
}

// New builds the documents of resources. defs is normally
// k8s.io/kubernetes/pkg/generated/openapi.GetOpenAPIDefinitions and scheme
// one that knows every served built-in kind and the meta/v1 options in core
// v1, normally k8s.io/client-go/kubernetes/scheme.Scheme; definitions are
// named and given x-kubernetes-group-version-kind from it, as kube-apiserver
// does with its legacyscheme. Fields of disabled features are removed from
// defs as in kube-apiserver.
//
// A document holds only the definitions reachable from its operations.
// New checks the resources and installs their routes; it builds no
// document. Each /openapi/v3 document is built when first asked for or
// warmed (Warm returns the build errors), and /openapi/v2, built from the
// same routes and definitions, when first asked for (an error in that
// build is logged by kube-openapi's handler, as after SetGroupVersion).
func New(defs common.GetOpenAPIDefinitions, scheme *runtime.Scheme, resources []Resource, opts ...Option) (*Service, error) {
	if defs == nil || scheme == nil {
		return nil, errors.New("openapi: New needs definitions and a scheme")
	}
	s := &Service{
		scheme:     scheme,
		serializer: negotiatedSerializer(scheme),
		info:       spec.InfoProps{Title: "Kubernetes", Version: "unversioned"},
		gvs:        map[schema.GroupVersion]*groupVersion{},
		discovery:  map[string]*routeContainer{},
		v3:         handler3.NewOpenAPIService(),
	}
	s.docs.Store(&map[string]cached.Value[*spec3.OpenAPI]{})
	for _, opt := range opts {
		opt(s)
	}
	var err error
	if s.defs, err = newDefinitions(defs, scheme); err != nil {
		return nil, err
	}

	byGV := map[schema.GroupVersion][]Resource{}
	for _, r := range resources {
		gv := r.GVK.GroupVersion()
		byGV[gv] = append(byGV[gv], r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gv := range sortedGroupVersions(byGV) {
		if err := s.setGroupVersionLocked(gv, byGV[gv], nil, false); err != nil {
			return nil, err
		}
	}
	// /openapi/v2, which covers everything, is built when first asked for,
	// as after a change and as kube-apiserver's: it took half a second of
	// the server's start-up and megabytes of heap for as long as the
	// server runs, and most clients only read /openapi/v3.
	s.v2 = handler.NewOpenAPIServiceLazy(cached.Once(cached.Func(s.lazyV2(s.v2Generation))))
	s.mux = s.newMux()
	return s, nil
}

// SetGroupVersion replaces the documents of one group-version with those of
// resources (all of which must be in gv); no resources removes the
// group-version. It is how custom resources are added at run time.
//
// extraDefs describes kinds of gv the scheme does not know: the key is the
// kind, the schema its OpenAPI v2 schema, named as kube-apiserver names a
// custom resource ("com.example.v1.Widget" for example.com/v1 Widget) and
// given x-kubernetes-group-version-kind. A schema's $refs must be
// "#/definitions/{name}" naming a generated definition (such as
// io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta) or another kind of
// extraDefs; they become "#/components/schemas/{name}" in /openapi/v3. A kind
// whose list kind is not described gets a list schema like a custom
// resource's. The schemas are kept, not copied: do not change them afterwards.
//
// The group-version's v3 document is rebuilt at once (a few
// milliseconds); /openapi/v2, which covers everything and takes a few hundred
// milliseconds to build, is rebuilt when next asked for, so a burst of
// changes costs one v2 build. An error in that build is logged by
// kube-openapi's handler, which keeps serving the document it had.
//
// On error nothing changes.
func (s *Service) SetGroupVersion(gv schema.GroupVersion, resources []Resource, extraDefs map[string]spec.Schema) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.setGroupVersionLocked(gv, resources, extraDefs, true); err != nil {
		return err
	}
	return nil
}

// setGroupVersionLocked builds and, when everything built, installs the
// documents of gv. A change (SetGroupVersion) builds gv's v3 documents at
// once, so that an error in them is returned, and has /openapi/v2 rebuilt
// when next asked for. New's documents, all built-in, are built when first
// asked for instead (Warm, or a request), as kube-apiserver builds its own:
// built at start, they were a large share of an empty start's CPU.
func (s *Service) setGroupVersionLocked(gv schema.GroupVersion, resources []Resource, extraDefs map[string]spec.Schema, change bool) error {
	if gv.Version == "" {
		return fmt.Errorf("openapi: group-version %q has no version", gv)
	}
	path := strings.TrimPrefix(rootPath(gv), "/")
	next, err := s.build(gv, path, resources, extraDefs, change)
	if err != nil {
		return err
	}
	s.publish(path, next, change)
	return nil
}

// served is what the service serves after a change.
type served struct {
	gv        *groupVersion // nil: the group-version is removed
	gvs       map[schema.GroupVersion]*groupVersion
	discovery map[string]*routeContainer
	docs      map[string]cached.Value[*spec3.OpenAPI] // new or replaced
}

// build prepares gv's change under defsMu: its routes and extra
// definitions, and its documents and the new discovery documents, built
// now when eager. On error the definitions are as before.
func (s *Service) build(gv schema.GroupVersion, path string, resources []Resource, extraDefs map[string]spec.Schema, eager bool) (served, error) {
	s.defsMu.Lock()
	defer s.defsMu.Unlock()
	next, extras, err := s.prepare(gv, resources, extraDefs)
	if err != nil {
		return served{}, fmt.Errorf("openapi: %s: %w", path, err)
	}
	var oldExtra []string
	if old := s.gvs[gv]; old != nil {
		oldExtra = old.extra
	}
	undo := s.defs.setExtra(oldExtra, extras)
	out := served{gv: next, gvs: maps.Clone(s.gvs), docs: map[string]cached.Value[*spec3.OpenAPI]{}}
	if next != nil {
		out.gvs[gv] = next
		out.docs[path] = s.v3Doc(path, next.routes, eager)
	} else {
		delete(out.gvs, gv)
	}
	out.discovery = s.discoveryRoutes(slices.Collect(maps.Keys(out.gvs)))
	for p, c := range out.discovery {
		if _, built := s.discovery[p]; !built {
			out.docs[p] = s.v3Doc(p, c, eager)
		}
	}
	for _, d := range out.docs {
		if !eager {
			break // built, under defsMu, when asked for
		}
		if _, _, err := d.Get(); err != nil {
			undo()
			return served{}, err
		}
	}
	return out, nil
}

// publish installs a built change, not under defsMu: kube-openapi's handler
// takes that, under its own lock, to build a lazy document.
func (s *Service) publish(path string, next served, change bool) {
	docs := maps.Clone(*s.docs.Load())
	if next.gv == nil {
		s.v3.DeleteGroupVersion(path)
		delete(docs, path)
	}
	for p, d := range next.docs {
		s.v3.UpdateGroupVersionLazy(p, d)
		docs[p] = d
	}
	for p := range s.discovery {
		if _, ok := next.discovery[p]; !ok {
			s.v3.DeleteGroupVersion(p)
			delete(docs, p)
		}
	}
	s.gvs, s.discovery = next.gvs, next.discovery
	s.docs.Store(&docs)
	if change {
		s.v2Generation++
		s.v2.UpdateSpecLazy(cached.Once(cached.Func(s.lazyV2(s.v2Generation))))
	}
}

// v3Doc is the v3 document of path: built now when eager (and Get returns
// it, or why it could not be built; the caller holds defsMu), or else when
// first asked for, under defsMu.
func (s *Service) v3Doc(path string, c common.RouteContainer, eager bool) cached.Value[*spec3.OpenAPI] {
	if eager {
		doc, err := s.buildV3(path, c)
		if err != nil {
			return cached.Result[*spec3.OpenAPI]{Err: err}
		}
		return cached.Static(doc, uuid.New().String())
	}
	return cached.Once(cached.Func(func() (*spec3.OpenAPI, string, error) {
		s.defsMu.Lock()
		defer s.defsMu.Unlock()
		doc, err := s.buildV3(path, c)
		return doc, "strata-v3-" + path, err
	}))
}

// lazyV2 returns the build of /openapi/v2 over the group-versions served
// when it runs (not when it was made: a request may still hold an older
// build function after a change).
func (s *Service) lazyV2(generation int) func() (*spec.Swagger, string, error) {
	return func() (*spec.Swagger, string, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.defsMu.Lock()
		defer s.defsMu.Unlock()
		sw, err := s.buildV2(allRoutes(s.gvs, s.discovery))
		return sw, fmt.Sprintf("strata-v2-%d", generation), err
	}
}

// prepare validates the resources and extra definitions of gv and installs
// their routes; a nil groupVersion means gv is to be removed.
func (s *Service) prepare(gv schema.GroupVersion, resources []Resource, extraDefs map[string]spec.Schema) (*groupVersion, map[string]extraDefinition, error) {
	if len(resources) == 0 {
		if len(extraDefs) > 0 {
			return nil, nil, errors.New("extra definitions without resources")
		}
		return nil, nil, nil
	}
	plurals := make([]string, 0, len(resources))
	for _, r := range resources {
		if err := r.validate(); err != nil {
			return nil, nil, fmt.Errorf("resource %q: %w", r.Plural, err)
		}
		if r.GVK.GroupVersion() != gv {
			return nil, nil, fmt.Errorf("resource %q: kind %v is not in %v", r.Plural, r.GVK, gv)
		}
		plurals = append(plurals, r.Plural)
	}
	if p := duplicate(plurals); p != "" {
		return nil, nil, fmt.Errorf("resource %q listed twice", p)
	}
	extras, err := s.extraDefinitions(gv, resources, extraDefs)
	if err != nil {
		return nil, nil, err
	}
	k := kinds{scheme: s.scheme, extra: map[schema.GroupVersionKind]string{}}
	for name, e := range extras {
		k.extra[e.gvk] = name
	}
	routes, err := s.installGroupVersion(gv, resources, k)
	if err != nil {
		return nil, nil, err
	}
	return &groupVersion{
		resources: slices.Clone(resources),
		extra:     slices.Sorted(maps.Keys(extras)),
		routes:    routes,
	}, extras, nil
}

// extraDefinitions checks extraDefs against the scheme and the resources and
// adds list schemas where they are missing.
func (s *Service) extraDefinitions(gv schema.GroupVersion, resources []Resource, extraDefs map[string]spec.Schema) (map[string]extraDefinition, error) {
	if len(extraDefs) > 0 && gv.Group == "" {
		return nil, errors.New("extra definitions in the core group")
	}
	raw := map[string]spec.Schema{}
	gvks := map[string]schema.GroupVersionKind{}
	for kind, sch := range extraDefs {
		if err := validateKind(kind); err != nil {
			return nil, err
		}
		gvk := gv.WithKind(kind)
		if s.scheme.Recognizes(gvk) {
			return nil, fmt.Errorf("extra definition of %v: the scheme has this kind", gvk)
		}
		sch.Extensions = maps.Clone(sch.Extensions) // the builders write into them
		raw[modelName(gvk)], gvks[modelName(gvk)] = sch, gvk
	}
	for _, r := range resources {
		if s.scheme.Recognizes(r.GVK) {
			continue
		}
		if _, ok := extraDefs[r.GVK.Kind]; !ok {
			return nil, fmt.Errorf("resource %q: kind %v is neither in the scheme nor in the extra definitions", r.Plural, r.GVK)
		}
		list := gv.WithKind(r.listKind())
		if err := validateKind(list.Kind); err != nil {
			return nil, fmt.Errorf("resource %q: list %w", r.Plural, err)
		}
		if _, ok := raw[modelName(list)]; !ok && !s.scheme.Recognizes(list) {
			raw[modelName(list)], gvks[modelName(list)] = listSchema(r.GVK, list), list
		}
	}
	local := map[string]bool{}
	for name := range raw {
		local[name] = true
	}
	out := make(map[string]extraDefinition, len(raw))
	for name, sch := range raw {
		e, err := s.defs.newExtraDefinition(gvks[name], sch, local)
		if err != nil {
			return nil, fmt.Errorf("extra definition of %v: %w", gvks[name], err)
		}
		out[name] = e
	}
	return out, nil
}

// allRoutes returns the route containers of /openapi/v2: those of every
// document, in a stable order.
func allRoutes(gvs map[schema.GroupVersion]*groupVersion, discovery map[string]*routeContainer) []common.RouteContainer {
	var out []common.RouteContainer
	for _, p := range slices.Sorted(maps.Keys(discovery)) {
		out = append(out, discovery[p])
	}
	for _, gv := range sortedGroupVersions(gvs) {
		out = append(out, gvs[gv].routes)
	}
	return out
}

func sortedGroupVersions[V any](m map[schema.GroupVersion]V) []schema.GroupVersion {
	return slices.SortedFunc(maps.Keys(m), func(a, b schema.GroupVersion) int {
		return strings.Compare(a.String(), b.String())
	})
}
