package openapi

import (
	"fmt"
	"maps"
	"strings"

	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The configurations are kube-apiserver's: genericapiserver.DefaultOpenAPIConfig
// and DefaultOpenAPIV3Config with the title kube-apiserver sets
// (k8s.io/kubernetes/pkg/controlplane/apiserver/config.go). They are built per
// use because the builders write into them.

func (s *Service) v2Config() *common.Config {
	return &common.Config{
		ProtocolList:   []string{"https"},
		IgnorePrefixes: []string{},
		Info:           &spec.Info{InfoProps: s.info},
		DefaultResponse: &spec.Response{
			ResponseProps: spec.ResponseProps{Description: "Default Response."},
		},
		GetOperationIDAndTags: apiopenapi.GetOperationIDAndTags,
		GetDefinitionName:     s.defs.GetDefinitionName,
		GetDefinitions: func(common.ReferenceCallback) map[string]common.OpenAPIDefinition {
			return s.defs.v2()
		},
	}
}

func (s *Service) v3Config() *common.OpenAPIV3Config {
	return &common.OpenAPIV3Config{
		IgnorePrefixes: []string{},
		Info:           &spec.Info{InfoProps: s.info},
		DefaultResponse: &spec3.Response{
			ResponseProps: spec3.ResponseProps{Description: "Default Response."},
		},
		GetOperationIDAndTags: apiopenapi.GetOperationIDAndTags,
		GetDefinitionName:     s.defs.GetDefinitionName,
		Definitions:           s.defs.v3,
	}
}

// buildV2 builds the /openapi/v2 document over the given route containers,
// without defaults as kube-apiserver serves it (routes.OpenAPI.InstallV2).
func (s *Service) buildV2(containers []common.RouteContainer) (*spec.Swagger, error) {
	sw, err := builder.BuildOpenAPISpecFromRoutes(containers, s.v2Config())
	if err != nil {
		return nil, fmt.Errorf("openapi: building v2 document: %w", err)
	}
	sw.Definitions = handler.PruneDefaults(sw.Definitions)
	for name, def := range sw.Definitions {
		def.Extensions = maps.Clone(def.Extensions)
		sw.Definitions[name] = def
	}
	return sw, nil
}

// buildV3 builds the /openapi/v3/{path} document of one route container.
func (s *Service) buildV3(path string, c common.RouteContainer) (*spec3.OpenAPI, error) {
	doc, err := builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{c}, s.v3Config())
	if err != nil {
		return nil, fmt.Errorf("openapi: building v3 document %s: %w", path, err)
	}
	for _, schema := range doc.Components.Schemas {
		if schema != nil {
			schema.Extensions = maps.Clone(schema.Extensions)
		}
	}
	if group, version, ok := groupVersionFromPath(path); ok {
		filterScopedGVKs(doc, group, version)
	}
	return doc, nil
}

// The builders copy definitions shallowly, so a built document shares the
// top-level extension maps of the definitions it was built from, and later
// builds write into those maps (the GVK extension, the v2 schema extension
// they delete). Giving each document maps of its own, as buildV2 and buildV3
// do, keeps a later build from racing with the serving of an earlier document.

// groupVersionFromPath extracts the API group and version from a document
// path like "apis/apps/v1" or "api/v1" (k8s.io/apiserver/pkg/server/routes).
func groupVersionFromPath(path string) (group, version string, ok bool) {
	parts := strings.SplitN(path, "/", 4)
	switch {
	case len(parts) == 2 && parts[0] == "api":
		return "", parts[1], true
	case len(parts) == 3 && parts[0] == "apis":
		return parts[1], parts[2], true
	default:
		return "", "", false
	}
}

// crossRegisteredKinds are the kinds metav1.AddToGroupVersion registers into
// every API group.
var crossRegisteredKinds = map[string]bool{"WatchEvent": true, "DeleteOptions": true}

// filterScopedGVKs narrows x-kubernetes-group-version-kind of WatchEvent and
// DeleteOptions in a group-version document to that group-version and core
// v1, as kube-apiserver does since 1.37 (k8s.io/apiserver/pkg/server/routes,
// unexported there).
func filterScopedGVKs(doc *spec3.OpenAPI, group, version string) {
	if doc.Components == nil {
		return
	}
	for _, schema := range doc.Components.Schemas {
		if schema == nil {
			continue
		}
		gvks, ok := schema.Extensions[gvkExtensionKey].([]interface{})
		if !ok || len(gvks) <= 1 {
			continue
		}
		first, _ := gvks[0].(map[string]interface{})
		if kind, _ := first["kind"].(string); !crossRegisteredKinds[kind] {
			continue
		}
		var kept []interface{}
		for _, item := range gvks {
			m, _ := item.(map[string]interface{})
			g, gok := m["group"].(string)
			v, vok := m["version"].(string)
			if !gok || !vok {
				continue
			}
			if (g == group && v == version) || (g == "" && v == "v1") {
				kept = append(kept, item)
			}
		}
		if len(kept) > 0 {
			schema.Extensions[gvkExtensionKey] = kept
		} else {
			delete(schema.Extensions, gvkExtensionKey)
		}
	}
}
