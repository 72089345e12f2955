package registry

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	kubeletclient "k8s.io/kubernetes/pkg/kubelet/client"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/pod"

	"github.com/stratadev/strata/storage"
)

// The subresources kube-apiserver serves through a node's kubelet (pods/log,
// exec, attach, portforward and proxy; nodes/proxy) or a service's
// endpoints (services/proxy). strata runs no kubelets and proxies nothing:
// it answers every request as kube-apiserver does up to the point where
// kube-apiserver would connect, with upstream's own location functions
// (k8s.io/kubernetes/pkg/registry/core/pod and node: a missing pod is 404,
// an unscheduled one 400 "pod x does not have a host assigned", logs of an
// unscheduled pod 204), and then 503 ServiceUnavailable naming what it
// cannot reach.

var (
	gvrNodes          = core.WithResource("nodes")
	gvrEndpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// parameterCodec decodes a connecter's query into its internal options.
var parameterCodec = runtime.NewParameterCodec(Scheme)

// Connecter serves a subresource kube-apiserver serves through a kubelet
// or a service's endpoints, up to the point where kube-apiserver would
// connect.
type Connecter interface {
	// Connect answers the request for the object ns/name with the
	// query's options: an error (503 where kube-apiserver would connect),
	// or noContent for a log that does not exist yet.
	Connect(ctx context.Context, ns, name string, query url.Values) (noContent bool, err error)
}

// kubeletREST serves one kubelet-served subresource of a store.
type kubeletREST struct {
	store       *Store
	subresource string
	lookup      func(schema.GroupVersionResource) (*Store, bool)
}

func (k *kubeletREST) Connect(ctx context.Context, ns, name string, query url.Values) (bool, error) {
	kind := k.store.kind
	getter := podGetter{store: k.store, ns: ns}
	conn := connectionInfo{lookup: k.lookup, subresource: kind.Resource + "/" + k.subresource}
	var err error
	switch kind.Resource + "/" + k.subresource {
	case "pods/log":
		var location bool
		if location, err = podLog(ctx, query, getter, conn, name); err == nil && !location {
			// An unscheduled pod has no log: kube-apiserver streams nothing.
			return true, nil
		}
	case "pods/exec":
		opts := &api.PodExecOptions{}
		if err = decodeOptions(query, opts); err == nil {
			_, _, err = pod.ExecLocation(ctx, getter, conn, name, opts)
		}
	case "pods/attach":
		opts := &api.PodAttachOptions{}
		if err = decodeOptions(query, opts); err == nil {
			_, _, err = pod.AttachLocation(ctx, getter, conn, name, opts)
		}
	case "pods/portforward":
		opts := &api.PodPortForwardOptions{}
		if err = decodeOptions(query, opts); err == nil {
			_, _, err = pod.PortForwardLocation(ctx, getter, conn, name, opts)
		}
	case "pods/proxy":
		if _, _, err = pod.ResourceLocation(ctx, getter, nil, name); err == nil {
			err = unreachable("pod %s: strata does not proxy to pods", name)
		}
	case "nodes/proxy":
		_, _, err = node.ResourceLocation(nil, conn, nil, ctx, name)
	case "services/proxy":
		err = serviceLocation(ctx, k.store, k.lookup, ns, name)
	default:
		err = NotServed()
	}
	return false, err
}

// podLog runs upstream's LogREST.Get up to the connection: the options
// decoded and validated, then the log's location (none for an unscheduled
// pod).
func podLog(ctx context.Context, query url.Values, getter podGetter, conn connectionInfo, name string) (bool, error) {
	opts := &api.PodLogOptions{}
	if err := decodeOptions(query, opts); err != nil {
		return false, err
	}
	splitStreams := utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodLogsQuerySplitStreams)
	if splitStreams && opts.Stream == nil {
		all := api.LogStreamAll
		opts.Stream = &all
	}
	if errs := validation.ValidatePodLogOptions(opts, splitStreams); len(errs) > 0 {
		return false, apierrors.NewInvalid(api.Kind("PodLogOptions"), name, errs)
	}
	location, _, err := pod.LogLocation(ctx, getter, conn, name, opts)
	return location != nil, err
}

// decodeOptions reads a connecter's options from the query, as
// kube-apiserver's installer does (a malformed query is 400).
func decodeOptions(query url.Values, into runtime.Object) error {
	if err := parameterCodec.DecodeParameters(query, corev1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// unreachable is strata's answer where kube-apiserver would connect.
func unreachable(format string, args ...any) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf(format, args...))
}

// podGetter is the pod.ResourceGetter upstream's location functions read
// pods with: the namespace's pods, as the internal type.
type podGetter struct {
	store *Store
	ns    string
}

func (g podGetter) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	u, err := g.store.storage.Get(ctx, g.ns, name, storage.GetOptions{})
	if err != nil {
		return nil, err
	}
	return g.store.kind.PodOf(u)
}

// connectionInfo stands for kube-apiserver's kubelet connection getter: a
// missing node is 404 as there; a node that exists has no kubelet strata
// could reach.
type connectionInfo struct {
	lookup      func(schema.GroupVersionResource) (*Store, bool)
	subresource string
}

func (c connectionInfo) GetConnectionInfo(ctx context.Context, nodeName types.NodeName) (*kubeletclient.ConnectionInfo, error) {
	nodes, ok := c.lookup(gvrNodes)
	if !ok {
		return nil, NotServed()
	}
	if _, err := nodes.storage.Get(ctx, "", string(nodeName), storage.GetOptions{}); err != nil {
		return nil, err
	}
	return nil, unreachable("%s needs the kubelet of node %s: strata runs no kubelets", c.subresource, nodeName)
}

// serviceLocation follows the service storage's ResourceLocation
// (pkg/registry/core/service/storage): the service, its port when the id
// names one by number, and its endpoint slices, which strata has no proxy
// to reach.
func serviceLocation(ctx context.Context, services *Store, lookup func(schema.GroupVersionResource) (*Store, bool), ns, id string) error {
	_, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if portNum, err := strconv.ParseInt(port, 10, 64); err == nil {
		svc, err := services.storage.Get(ctx, ns, name, storage.GetOptions{})
		if err != nil {
			return err
		}
		if !hasServicePort(svc, portNum) {
			return unreachable("no service port %d found for service %q", portNum, name)
		}
	}
	slices, ok := lookup(gvrEndpointSlices)
	if !ok {
		return unreachable("no endpoints available for service %q", name)
	}
	list, err := slices.storage.List(ctx, ns, storage.ListOptions{
		Label: labels.SelectorFromSet(labels.Set{"kubernetes.io/service-name": name})})
	if err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return unreachable("no endpoints available for service %q", name)
	}
	return unreachable("service %q: strata does not proxy to endpoints", name)
}

func hasServicePort(svc *unstructured.Unstructured, port int64) bool {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			if n, ok := m["port"].(int64); ok && n == port {
				return true
			}
		}
	}
	return false
}
