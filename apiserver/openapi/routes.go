package openapi

import (
	"fmt"
	"slices"
	"strings"

	restful "github.com/emicklei/go-restful/v3"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
)

// The operations of the documents are not written here: each resource is
// handed to k8s.io/apiserver's own route installer (endpoints.APIGroupVersion)
// with a documentation-only storage, exactly as kube-apiserver installs its
// resources, and the go-restful routes it registers are what kube-openapi's
// builders turn into paths, operations, parameters, operation IDs and the
// x-kubernetes-group-version-kind / x-kubernetes-action extensions.

// routeContainer is a common.RouteContainer over routes picked from several
// go-restful web services.
type routeContainer struct {
	root   string
	routes []common.Route
}

func (c *routeContainer) RootPath() string                   { return c.root }
func (c *routeContainer) PathParameters() []common.Parameter { return nil }
func (c *routeContainer) Routes() []common.Route             { return c.routes }

// negotiatedSerializer is what kube-apiserver's API groups use
// (genericapiserver.NewDefaultAPIGroupInfo); the installer reads the media
// types of the produces lists from it.
func negotiatedSerializer(scheme *runtime.Scheme) runtime.NegotiatedSerializer {
	opts := []serializer.CodecFactoryOptionsMutator{
		serializer.WithStreamingCollectionEncodingToJSON(),
		serializer.WithStreamingCollectionEncodingToProtobuf(),
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.CBORServingAndStorage) {
		opts = append(opts, serializer.WithSerializer(cbor.NewSerializerInfo))
	}
	return serializer.NewCodecFactory(scheme, opts...)
}

// rootPath is the URL prefix of a group-version: /api/v1 or /apis/{group}/{version}.
func rootPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// installGroupVersion returns the routes of one group-version: those of each
// resource, limited to the verbs it serves, and the group-version's discovery
// route (GET /apis/{group}/{version}/).
func (s *Service) installGroupVersion(gv schema.GroupVersion, resources []Resource, k kinds) (*routeContainer, error) {
	out := &routeContainer{root: rootPath(gv)}
	for i, r := range resources {
		ws, err := s.installResource(gv, r, k)
		if err != nil {
			return nil, fmt.Errorf("resource %q: %w", r.Plural, err)
		}
		for _, route := range restfuladapter.AdaptWebServices([]*restful.WebService{ws})[0].Routes() {
			action, _ := route.Metadata()[endpoints.RouteMetaAction].(string)
			switch {
			case action == "":
				// The discovery route, the same in every install: keep one.
				if i == 0 {
					out.routes = append(out.routes, route)
				}
			case routeAllowed(r, route.Path(), action):
				out.routes = append(out.routes, route)
			}
		}
	}
	return out, nil
}

// routeAllowed reports whether the route of action at path belongs to a verb
// the resource (or the subresource the path ends in) serves.
func routeAllowed(r Resource, path, action string) bool {
	for _, name := range r.Subresources {
		if strings.HasSuffix(path, "/{name}/"+name) {
			sub := knownSubresources[name]
			return Resource{Verbs: sub.verbs}.allowsAction(action)
		}
	}
	return r.allowsAction(action)
}

// installResource runs k8s.io/apiserver's installer for one resource and its
// subresources, in a container of their own (go-restful exits the process on
// two web services with one root path in a container).
func (s *Service) installResource(gv schema.GroupVersion, r Resource, k kinds) (*restful.WebService, error) {
	store, err := newResourceStorage(r, k)
	if err != nil {
		return nil, err
	}
	storage := map[string]rest.Storage{r.Plural: store}
	for _, name := range r.Subresources {
		gvk := knownSubresources[name].kind(r.GVK)
		sample, err := k.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("subresource %q: kind %v: %w", name, gvk, err)
		}
		storage[r.Plural+"/"+name] = &subresourceStorage{kindStorage: kindStorage{
			gvk:        gvk,
			newObject:  sample.DeepCopyObject,
			namespaced: r.Namespaced,
		}}
	}
	group := &endpoints.APIGroupVersion{
		Storage:                    storage,
		Root:                       "/api",
		GroupVersion:               gv,
		OptionsExternalVersion:     &schema.GroupVersion{Version: "v1"},
		Serializer:                 s.serializer,
		ParameterCodec:             runtime.NewParameterCodec(s.scheme),
		Typer:                      k,
		Creater:                    k,
		Convertor:                  s.scheme,
		ConvertabilityChecker:      s.scheme,
		Defaulter:                  s.scheme,
		Namer:                      meta.NewAccessor(),
		UnsafeConvertor:            runtime.UnsafeObjectConvertor(s.scheme),
		TypeConverter:              managedfields.NewDeducedTypeConverter(),
		EquivalentResourceRegistry: runtime.NewEquivalentResourceRegistry(),
	}
	if gv.Group != "" {
		group.Root = "/apis"
	}
	container := restful.NewContainer()
	if _, _, err := group.InstallREST(container); err != nil {
		return nil, fmt.Errorf("installing routes: %w", err)
	}
	services := container.RegisteredWebServices()
	if len(services) != 1 {
		return nil, fmt.Errorf("installer registered %d web services, want 1", len(services))
	}
	return services[0], nil
}

// newResourceStorage makes the documentation storage of a top-level
// resource: one that only creates (a review) has no list kind.
func newResourceStorage(r Resource, k kinds) (rest.Storage, error) {
	sample, err := k.New(r.GVK)
	if err != nil {
		return nil, fmt.Errorf("kind %v: %w", r.GVK, err)
	}
	if slices.Equal(r.Verbs, []string{"create"}) {
		return &createStorage{kindStorage: kindStorage{gvk: r.GVK, newObject: sample.DeepCopyObject,
			namespaced: r.Namespaced, singular: strings.ToLower(r.GVK.Kind)}}, nil
	}
	listGVK := r.GVK.GroupVersion().WithKind(r.listKind())
	list, err := k.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("list kind %v: %w", listGVK, err)
	}
	return &resourceStorage{
		kindStorage: kindStorage{
			gvk:        r.GVK,
			newObject:  sample.DeepCopyObject,
			namespaced: r.Namespaced,
			singular:   strings.ToLower(r.GVK.Kind),
		},
		newList:             list.DeepCopyObject,
		deleteReturnsObject: r.DeleteReturnsObject,
	}, nil
}

// discoveryRoutes are the routes of the discovery documents kube-apiserver
// describes besides its group-versions: GET /api/ (when the core group is
// served), GET /apis/ and GET /apis/{group}/ for every served group.
func (s *Service) discoveryRoutes(gvs []schema.GroupVersion) map[string]*routeContainer {
	out := map[string]*routeContainer{}
	add := func(ws *restful.WebService) {
		c := restfuladapter.AdaptWebServices([]*restful.WebService{ws})[0]
		out[strings.Trim(ws.RootPath(), "/")] = &routeContainer{root: c.RootPath(), routes: c.Routes()}
	}
	addresses := discovery.DefaultAddresses{}
	for _, gv := range gvs {
		if gv.Group == "" {
			if _, ok := out["api"]; !ok {
				add(discovery.NewLegacyRootAPIHandler(addresses, s.serializer, "/api").WebService())
			}
			continue
		}
		if _, ok := out["apis"]; !ok {
			add(discovery.NewRootAPIsHandler(addresses, s.serializer).WebService())
		}
		if _, ok := out["apis/"+gv.Group]; !ok {
			add(discovery.NewAPIGroupHandler(s.serializer, metav1.APIGroup{Name: gv.Group}).WebService())
		}
	}
	return out
}
