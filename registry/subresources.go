package registry

import (
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/pod"
)

// subresource is one of a built-in kind's subresources besides status,
// scale and binding (which have fields of their own in Kind), with the
// kind and verbs kube-apiserver's discovery lists it with.
type subresource struct {
	name string
	// gvk is the kind the subresource reads or writes; zero for the
	// parent's kind.
	gvk   schema.GroupVersionKind
	verbs []string
	// update is set when the subresource's writes are updates of the
	// parent object through their own strategy (as kube-apiserver's
	// storage installs a copy of the store with another UpdateStrategy),
	// and its get is a get of the object.
	update rest.RESTUpdateStrategy
	// unreportedResets: kube-apiserver's REST of the subresource does not
	// report its strategy's reset fields to the installer, so server-side
	// apply leaves no field unowned (pods/ephemeralcontainers, pods/resize).
	unreportedResets bool
	// kubelet: the subresource is served by kube-apiserver through the
	// node's kubelet (a connecter: logs, exec, proxies), which strata has not.
	kubelet bool
}

var (
	getPatchUpdate = []string{"get", "patch", "update"}
	proxyVerbs     = []string{"create", "delete", "get", "patch", "update"}
	connectVerbs   = []string{"create", "get"}
)

// updateSub is a subresource whose writes go through strategy
// (pkg/registry/<group>/<resource>/storage: a store copy with
// UpdateStrategy set to it).
func updateSub(name string, strategy rest.RESTUpdateStrategy, verbs []string) subresource {
	return subresource{name: name, update: strategy, verbs: verbs}
}

// kubeletSub is a subresource kube-apiserver serves through a kubelet; its
// kind is the core options type its connecter takes.
func kubeletSub(name, kind string, verbs []string) subresource {
	return subresource{name: name, gvk: core.WithKind(kind), verbs: verbs, kubelet: true}
}

// The subresources of pkg/registry/core/rest/storage_core.go and
// pkg/registry/certificates/rest: pods/resize is there when the
// InPlacePodVerticalScaling feature is on, GA (and locked on) in v1.37.
var (
	podSubresources = []subresource{
		kubeletSub("attach", "PodAttachOptions", connectVerbs),
		{name: "ephemeralcontainers", update: pod.EphemeralContainersStrategy, verbs: getPatchUpdate, unreportedResets: true},
		{name: "eviction", gvk: policy.WithKind("Eviction"), verbs: []string{"create"}},
		kubeletSub("exec", "PodExecOptions", connectVerbs),
		{name: "log", verbs: []string{"get"}, kubelet: true},
		kubeletSub("portforward", "PodPortForwardOptions", connectVerbs),
		kubeletSub("proxy", "PodProxyOptions", proxyVerbs),
		{name: "resize", update: pod.ResizeStrategy, verbs: getPatchUpdate, unreportedResets: true},
	}
	namespaceSubresources = []subresource{updateSub("finalize", namespace.FinalizeStrategy, []string{"update"})}
	nodeSubresources      = []subresource{kubeletSub("proxy", "NodeProxyOptions", proxyVerbs)}
	serviceSubresources   = []subresource{kubeletSub("proxy", "ServiceProxyOptions", proxyVerbs)}
	csrSubresources       = []subresource{updateSub("approval", certificates.ApprovalStrategy, getPatchUpdate)}
	// serviceaccounts/token creates TokenRequests (package satoken,
	// served by apiserver/tokenrequest.go).
	serviceAccountSubresources = []subresource{{name: "token", gvk: tokenRequestGVK, verbs: []string{"create"}}}
)

func (k *Kind) subresource(name string) (subresource, bool) {
	for _, s := range k.more {
		if s.name == name {
			return s, true
		}
	}
	return subresource{}, false
}

// updateStrategy is the strategy of an update of subresource ("" for
// the object itself); nil when the subresource has none.
func (k *Kind) updateStrategy(subresource string) rest.RESTUpdateStrategy {
	switch subresource {
	case "":
		return k.strategy
	case "status":
		if k.status == nil {
			return nil
		}
		return k.status
	}
	if s, ok := k.subresource(subresource); ok && s.update != nil {
		return s.update
	}
	return nil
}

// resetFieldsOf are the fields a write of subresource ("" for the object)
// leaves unowned, as kube-apiserver's installer reads them from the
// subresource's REST: its strategy's (scale's: the object's).
func (k *Kind) resetFieldsOf(subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if s, ok := k.subresource(subresource); ok && s.unreportedResets {
		return nil
	}
	if s := k.updateStrategy(subresource); s != nil {
		return resetFields(s)
	}
	return resetFields(k.strategy)
}

// UpdateSubresourceAllows says whether name is a subresource whose get,
// update and patch are those of the object through the subresource's own
// strategy (pods/ephemeralcontainers, pods/resize, namespaces/finalize,
// certificatesigningrequests/approval), and whether it answers verb.
func (k *Kind) UpdateSubresourceAllows(name, verb string) (isUpdate, allowed bool) {
	s, ok := k.subresource(name)
	if !ok || s.update == nil {
		return false, false
	}
	return true, slices.Contains(s.verbs, verb)
}

// KubeletSubresource says whether name is a subresource kube-apiserver
// serves through a kubelet (pods/log, pods/exec, pods/attach,
// pods/portforward, the proxies), and whether it answers verb.
func (k *Kind) KubeletSubresource(name, verb string) (isKubelet, allowed bool) {
	s, ok := k.subresource(name)
	if !ok || !s.kubelet {
		return false, false
	}
	return true, slices.Contains(s.verbs, verb)
}

// HasTokenRequest says whether the kind is ServiceAccount, with
// serviceaccounts/token.
func (k *Kind) HasTokenRequest() bool {
	s, ok := k.subresource("token")
	return ok && s.gvk == tokenRequestGVK
}

// HasEviction says whether the kind is Pod, with pods/eviction.
func (k *Kind) HasEviction() bool {
	s, ok := k.subresource("eviction")
	return ok && s.update == nil && !s.kubelet
}

// DiscoverySubresources lists the kind's subresources as kube-apiserver's
// legacy discovery does: name (resource/subresource),
// namespaced, group and version when they differ from the parent's, kind
// and verbs.
func (k *Kind) DiscoverySubresources() []metav1.APIResource {
	var out []metav1.APIResource
	add := func(name string, gvk schema.GroupVersionKind, verbs []string) {
		r := metav1.APIResource{Name: k.Resource + "/" + name, Namespaced: k.Namespaced, Kind: k.GVK.Kind, Verbs: verbs}
		if gvk.Kind != "" {
			r.Kind = gvk.Kind
			if gvk.GroupVersion() != k.GVK.GroupVersion() {
				r.Group, r.Version = gvk.Group, gvk.Version
			}
		}
		out = append(out, r)
	}
	if k.HasBinding() {
		add("binding", core.WithKind("Binding"), []string{"create"})
	}
	if k.HasStatus() {
		add("status", schema.GroupVersionKind{}, getPatchUpdate)
	}
	if k.HasScale() {
		add("scale", autoscalingGV1.WithKind("Scale"), getPatchUpdate)
	}
	for _, s := range k.more {
		add(s.name, s.gvk, s.verbs)
	}
	if k.custom == nil {
		// kube-apiserver's installer lists paths sorted; the CRD handler
		// lists status, then scale.
		sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	return out
}

// HasSubresource says whether the kind serves the subresource name.
func (k *Kind) HasSubresource(name string) bool {
	for _, r := range k.DiscoverySubresources() {
		if r.Name == k.Resource+"/"+name {
			return true
		}
	}
	return false
}
