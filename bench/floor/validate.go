package floor

import (
	"context"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/apps"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/core/configmap"

	"github.com/stratadev/strata/registry"
)

// floorKind is what the write floors need to store an object of a kind as
// kube-apiserver does: its resource, its external and internal versions,
// and upstream's strategy for it.
type floorKind struct {
	resource           string
	external, internal schema.GroupVersion
	strategy           rest.RESTCreateUpdateStrategy
}

var (
	configMaps  = floorKind{"configmaps", corev1.SchemeGroupVersion, core.SchemeGroupVersion, configmap.Strategy}
	deployments = floorKind{"deployments", appsv1.SchemeGroupVersion, apps.SchemeGroupVersion, deployment.Strategy}
)

// validated stores obj as kube-apiserver's store does, a create in
// namespace ns when old is nil and an update of old otherwise: it applies
// the external version's defaults, converts to the internal type, fills
// the system metadata of a create, runs upstream's strategy and validation
// (rest.BeforeCreate or BeforeUpdate, with the request's namespace and
// RequestInfo in ctx as its filters put them), and encodes the result in
// the external version, without the resourceVersion (etcd's revision).
func validated(ctx context.Context, k floorKind, ns string, obj, old runtime.Object) ([]byte, error) {
	registry.Scheme.Default(obj)
	internal, err := registry.Scheme.ConvertToVersion(obj, k.internal)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(internal)
	if err != nil {
		return nil, err
	}
	verb := "update"
	if old == nil {
		verb = "create"
	}
	ctx = genericapirequest.WithNamespace(ctx, ns)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: verb,
		APIGroup: k.external.Group, APIVersion: k.external.Version, Namespace: ns, Resource: k.resource, Name: m.GetName()})
	if old == nil {
		rest.FillObjectMetaSystemFields(m)
		err = rest.BeforeCreate(k.strategy, ctx, internal)
	} else {
		var oldInternal runtime.Object
		if oldInternal, err = registry.Scheme.ConvertToVersion(old, k.internal); err == nil {
			err = rest.BeforeUpdate(k.strategy, ctx, internal, oldInternal)
		}
	}
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion("")
	external, err := registry.Scheme.ConvertToVersion(internal, k.external)
	if err != nil {
		return nil, err
	}
	return json.Marshal(external)
}
