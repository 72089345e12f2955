package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/restmapper"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/controller/validatingadmissionpolicystatus"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

// policyStatusWorkers is kube-controller-manager's default
// --concurrent-validating-admission-policy-status-syncs.
const policyStatusWorkers = 5

// mapperResetPeriod is how often kube-controller-manager's REST mapper
// forgets what it discovered.
const mapperResetPeriod = 30 * time.Second

// startPolicyStatus runs kube-controller-manager's
// validatingadmissionpolicy-status-controller until ctx ends: it type
// checks each ValidatingAdmissionPolicy's CEL expressions against the
// kinds it matches and its paramKind and applies the warnings to
// status.typeChecking (observedGeneration the checked generation). Built
// as kube-controller-manager builds it: built-in kinds' schemas from the
// generated OpenAPI definitions, custom kinds' from the server's
// /openapi/v3, the kinds of the matched resources from a discovery REST
// mapper (reset every 30 s, and by the type checker when a resource is
// unknown, so that a new CRD is found).
func startPolicyStatus(ctx context.Context, t *term) error {
	disco, err := discovery.NewDiscoveryClientForConfig(t.cfg.Loopback)
	if err != nil {
		return fmt.Errorf("%s: discovery client: %w", PolicyStatusName, err)
	}
	schemas := lazySchemas(sync.OnceValue(func() resolver.SchemaResolver {
		return resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, k8sscheme.Scheme, apiextensionsscheme.Scheme).
			Combine(&resolver.ClientDiscoveryResolver{Discovery: disco})
	}))
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	go wait.Until(mapper.Reset, mapperResetPeriod, ctx.Done())
	c, err := validatingadmissionpolicystatus.NewController(
		t.cfg.Informers.Admissionregistration().V1().ValidatingAdmissionPolicies(),
		t.cfg.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies(),
		&validating.TypeChecker{SchemaResolver: schemas, RestMapper: mapper})
	if err != nil {
		return fmt.Errorf("%s: %w", PolicyStatusName, err)
	}
	t.goRun(func() { c.Run(ctx, policyStatusWorkers) })
	return nil
}

// lazySchemas is a schema resolver built when a policy is first type
// checked: the definitions' resolver generates the definitions of every
// built-in kind, megabytes of heap and tens of milliseconds of CPU at
// every start, most of which have no ValidatingAdmissionPolicy to check.
type lazySchemas func() resolver.SchemaResolver

func (l lazySchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return l().ResolveSchema(gvk)
}
