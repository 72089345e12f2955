package registry

import (
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
)

// Strategy is what kube-apiserver's registry strategies implement: create
// and update preparation and validation for one kind.
type Strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// Kind is one served resource type.
type Kind struct {
	// GVK is the served (and stored) version of the kind.
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, SingularName the singular.
	Resource, SingularName string
	// Namespaced says whether objects live in namespaces.
	Namespaced bool
	// ShortNames and Categories appear in discovery (kubectl get po, get all).
	ShortNames, Categories []string

	strategy Strategy
	// status is the strategy of the status subresource; nil when the kind
	// has none.
	status rest.RESTUpdateStrategy
	// custom is set for kinds served for a CustomResourceDefinition.
	custom *custom
	// defaultTable: kube-apiserver prints the kind with the default
	// columns (Name, Created At), not a printer of its own.
	defaultTable bool
	// deleteFinalizer is added by a delete (see DeleteFinalizer).
	deleteFinalizer string
	// keepsSchemaExtensions: the kind is CustomResourceDefinition, whose
	// schemas' x-kubernetes-patch-* keys strata keeps beside the typed
	// object (crdextensions.go).
	keepsSchemaExtensions bool
	// fields are the kind's field managers (fieldmanager.go).
	fields *fieldManagers
}

// GroupResource names the kind's resource.
func (k *Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.GVK.Group, Resource: k.Resource}
}

// GroupVersionResource names the kind's resource with its version.
func (k *Kind) GroupVersionResource() schema.GroupVersionResource {
	return k.GVK.GroupVersion().WithResource(k.Resource)
}

// ListGVK is the kind of the kind's lists.
func (k *Kind) ListGVK() schema.GroupVersionKind {
	return k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")
}

// HasStatus says whether the kind has a status subresource.
func (k *Kind) HasStatus() bool { return k.status != nil }

// DeleteFinalizer is the finalizer kube-apiserver's storage of the kind
// adds when an object is deleted, so that the object stays until a
// controller has cleaned up after it ("" for none): CRDs stay until their
// custom resources are gone.
func (k *Kind) DeleteFinalizer() string { return k.deleteFinalizer }

// Subresources lists the kind's subresources ("status", "scale"), each of
// which answers get, update and patch.
func (k *Kind) Subresources() []string {
	var out []string
	if k.HasStatus() {
		out = append(out, "status")
	}
	if k.Scale() != nil {
		out = append(out, "scale")
	}
	return out
}

// Verbs lists the verbs the resource answers, as discovery shows them.
func (k *Kind) Verbs() []string {
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

var (
	core  = schema.GroupVersion{Version: "v1"}
	apps  = schema.GroupVersion{Group: "apps", Version: "v1"}
	batch = schema.GroupVersion{Group: "batch", Version: "v1"}
	rbac  = schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	ext   = schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}
)

var all = []string{"all"}

// builtin is the table of built-in kinds. Short names and categories are
// those of kube-apiserver's REST storage for each resource.
var builtin = []Kind{
	{GVK: core.WithKind("Namespace"), Resource: "namespaces", ShortNames: []string{"ns"},
		strategy: namespace.Strategy, status: namespace.StatusStrategy},
	{GVK: core.WithKind("ConfigMap"), Resource: "configmaps", Namespaced: true, ShortNames: []string{"cm"},
		strategy: configmap.Strategy},
	{GVK: core.WithKind("Secret"), Resource: "secrets", Namespaced: true, strategy: secret.Strategy},
	{GVK: core.WithKind("Service"), Resource: "services", Namespaced: true, ShortNames: []string{"svc"}, Categories: all,
		strategy: service.Strategy, status: service.StatusStrategy},
	{GVK: core.WithKind("Pod"), Resource: "pods", Namespaced: true, ShortNames: []string{"po"}, Categories: all,
		strategy: pod.Strategy, status: pod.StatusStrategy},
	{GVK: core.WithKind("ServiceAccount"), Resource: "serviceaccounts", Namespaced: true, ShortNames: []string{"sa"},
		strategy: serviceaccount.Strategy},
	{GVK: core.WithKind("Event"), Resource: "events", Namespaced: true, ShortNames: []string{"ev"},
		strategy: event.Strategy},
	{GVK: core.WithKind("PersistentVolumeClaim"), Resource: "persistentvolumeclaims", Namespaced: true, ShortNames: []string{"pvc"},
		strategy: persistentvolumeclaim.Strategy, status: persistentvolumeclaim.StatusStrategy},
	{GVK: apps.WithKind("Deployment"), Resource: "deployments", Namespaced: true, ShortNames: []string{"deploy"}, Categories: all,
		strategy: deployment.Strategy, status: deployment.StatusStrategy},
	{GVK: apps.WithKind("StatefulSet"), Resource: "statefulsets", Namespaced: true, ShortNames: []string{"sts"}, Categories: all,
		strategy: statefulset.Strategy, status: statefulset.StatusStrategy},
	{GVK: apps.WithKind("DaemonSet"), Resource: "daemonsets", Namespaced: true, ShortNames: []string{"ds"}, Categories: all,
		strategy: daemonset.Strategy, status: daemonset.StatusStrategy},
	{GVK: apps.WithKind("ReplicaSet"), Resource: "replicasets", Namespaced: true, ShortNames: []string{"rs"}, Categories: all,
		strategy: replicaset.Strategy, status: replicaset.StatusStrategy},
	{GVK: batch.WithKind("Job"), Resource: "jobs", Namespaced: true, Categories: all,
		strategy: job.Strategy, status: job.StatusStrategy},
	{GVK: batch.WithKind("CronJob"), Resource: "cronjobs", Namespaced: true, ShortNames: []string{"cj"}, Categories: all,
		strategy: cronjob.Strategy, status: cronjob.StatusStrategy},
	{GVK: rbac.WithKind("Role"), Resource: "roles", Namespaced: true, strategy: role.Strategy},
	{GVK: rbac.WithKind("RoleBinding"), Resource: "rolebindings", Namespaced: true, strategy: rolebinding.Strategy},
	{GVK: rbac.WithKind("ClusterRole"), Resource: "clusterroles", strategy: clusterrole.Strategy},
	{GVK: rbac.WithKind("ClusterRoleBinding"), Resource: "clusterrolebindings", strategy: clusterrolebinding.Strategy},
	{GVK: ext.WithKind("CustomResourceDefinition"), Resource: "customresourcedefinitions", ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"}, defaultTable: true, keepsSchemaExtensions: true,
		deleteFinalizer: apiextensionsv1.CustomResourceCleanupFinalizer,
		strategy:        customresourcedefinition.NewStrategy(Scheme), status: customresourcedefinition.NewStatusStrategy(Scheme)},
}

// CRDResource is the resource of CustomResourceDefinitions.
var CRDResource = ext.WithResource("customresourcedefinitions")

// Builtin returns the built-in kinds, sorted by group then resource. Each
// call returns fresh copies.
func Builtin() []*Kind {
	out := make([]*Kind, len(builtin))
	for i := range builtin {
		k := builtin[i]
		k.SingularName = singular(k.GVK.Kind)
		k.fields = &fieldManagers{}
		out[i] = &k
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GVK.Group != out[j].GVK.Group {
			return out[i].GVK.Group < out[j].GVK.Group
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// singular is the singular resource name discovery shows: the kind in
// lower case.
func singular(kind string) string { return strings.ToLower(kind) }
