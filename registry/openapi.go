package registry

import (
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// OpenAPIDefinitions are the generated definitions of the built-in types
// and of apiextensions.k8s.io's and apiregistration.k8s.io's: the served
// documents and the models of server-side apply are built from them.
func OpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	for _, more := range []common.GetOpenAPIDefinitions{apiextensionsopenapi.GetOpenAPIDefinitions, aggregatoropenapi.GetOpenAPIDefinitions} {
		for name, d := range more(ref) {
			if _, ok := defs[name]; !ok {
				defs[name] = d
			}
		}
	}
	return defs
}
