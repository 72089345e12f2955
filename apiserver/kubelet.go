package apiserver

import (
	"context"
	"fmt"
	"net/http"
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

	"github.com/stratadev/strata/registry"
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
	gvrNodes          = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	gvrEndpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// parameterCodec decodes a connecter's query into its internal options.
var parameterCodec = runtime.NewParameterCodec(registry.Scheme)

// serveKubelet answers one kubelet-served subresource request.
func (s *Server) serveKubelet(w http.ResponseWriter, r *http.Request, c *call) {
	ctx := c.res.kind.Context(r.Context(), c.info.Namespace, c.info.Verb, c.info.Subresource, nil)
	getter := podGetter{res: c.res, ns: c.info.Namespace}
	conn := connectionInfo{s: s, subresource: c.res.kind.Resource + "/" + c.info.Subresource}
	name := c.info.Name
	var err error
	switch c.res.kind.Resource + "/" + c.info.Subresource {
	case "pods/log":
		var location bool
		if location, err = podLog(ctx, r, getter, conn, name); err == nil && !location {
			// An unscheduled pod has no log: kube-apiserver streams nothing.
			w.WriteHeader(http.StatusNoContent)
			return
		}
	case "pods/exec":
		opts := &api.PodExecOptions{}
		if err = decodeOptions(r, opts); err == nil {
			_, _, err = pod.ExecLocation(ctx, getter, conn, name, opts)
		}
	case "pods/attach":
		opts := &api.PodAttachOptions{}
		if err = decodeOptions(r, opts); err == nil {
			_, _, err = pod.AttachLocation(ctx, getter, conn, name, opts)
		}
	case "pods/portforward":
		opts := &api.PodPortForwardOptions{}
		if err = decodeOptions(r, opts); err == nil {
			_, _, err = pod.PortForwardLocation(ctx, getter, conn, name, opts)
		}
	case "pods/proxy":
		if _, _, err = pod.ResourceLocation(ctx, getter, nil, name); err == nil {
			err = unreachable("pod %s: strata does not proxy to pods", name)
		}
	case "nodes/proxy":
		_, _, err = node.ResourceLocation(nil, conn, nil, ctx, name)
	case "services/proxy":
		err = s.serviceLocation(ctx, c.res, c.info.Namespace, name)
	default:
		err = notFoundPath()
	}
	writeError(w, err)
}

// podLog runs upstream's LogREST.Get up to the connection: the options
// decoded and validated, then the log's location (none for an unscheduled
// pod).
func podLog(ctx context.Context, r *http.Request, getter podGetter, conn connectionInfo, name string) (bool, error) {
	opts := &api.PodLogOptions{}
	if err := decodeOptions(r, opts); err != nil {
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
func decodeOptions(r *http.Request, into runtime.Object) error {
	if err := parameterCodec.DecodeParameters(r.URL.Query(), corev1.SchemeGroupVersion, into); err != nil {
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
	res *resource
	ns  string
}

func (g podGetter) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	u, err := g.res.store.Get(ctx, g.ns, name, storage.GetOptions{})
	if err != nil {
		return nil, err
	}
	return g.res.kind.PodOf(u)
}

// connectionInfo stands for kube-apiserver's kubelet connection getter: a
// missing node is 404 as there; a node that exists has no kubelet strata
// could reach.
type connectionInfo struct {
	s           *Server
	subresource string
}

func (c connectionInfo) GetConnectionInfo(ctx context.Context, nodeName types.NodeName) (*kubeletclient.ConnectionInfo, error) {
	nodes, ok := c.s.current().lookup(gvrNodes)
	if !ok {
		return nil, notFoundPath()
	}
	if _, err := nodes.store.Get(ctx, "", string(nodeName), storage.GetOptions{}); err != nil {
		return nil, err
	}
	return nil, unreachable("%s needs the kubelet of node %s: strata runs no kubelets", c.subresource, nodeName)
}

// serviceLocation follows the service storage's ResourceLocation
// (pkg/registry/core/service/storage): the service, its port when the id
// names one by number, and its endpoint slices, which strata has no proxy
// to reach.
func (s *Server) serviceLocation(ctx context.Context, services *resource, ns, id string) error {
	_, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if portNum, err := strconv.ParseInt(port, 10, 64); err == nil {
		svc, err := services.store.Get(ctx, ns, name, storage.GetOptions{})
		if err != nil {
			return err
		}
		if !hasServicePort(svc, portNum) {
			return unreachable("no service port %d found for service %q", portNum, name)
		}
	}
	slices, ok := s.current().lookup(gvrEndpointSlices)
	if !ok {
		return unreachable("no endpoints available for service %q", name)
	}
	list, err := slices.store.List(ctx, ns, storage.ListOptions{
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
