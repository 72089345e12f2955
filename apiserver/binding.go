package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// gvrBindings and gvrPods name core bindings and pods.
var (
	gvrBindings = schema.GroupVersionResource{Version: "v1", Resource: "bindings"}
	gvrPods     = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// isBinding says whether a request creates a Binding: POST of
// pods/{name}/binding or of bindings.
func isBinding(c *call) bool {
	gvr := c.res.kind.GroupVersionResource()
	return c.info.Verb == "create" &&
		((gvr == gvrPods && c.info.Subresource == "binding") || (gvr == gvrBindings && c.info.Subresource == ""))
}

// serveBinding assigns a pod to a node as kube-apiserver's pods/binding
// and (legacy) bindings do: the Binding is validated, its uid and
// resourceVersion are preconditions on the pod, and the pod is updated
// without its strategy (registry.BindPod). The answer is a Success Status,
// 201.
func (s *Server) serveBinding(w http.ResponseWriter, r *http.Request, c *call) {
	sv := s.current()
	bindings, okB := sv.lookup(gvrBindings)
	pods, okP := sv.lookup(gvrPods)
	if !okB || !okP {
		writeError(w, notFoundPath())
		return
	}
	body, err := s.readObject(r, bindings.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := registry.DecodeBinding(body)
	if err != nil {
		writeError(w, err)
		return
	}
	if c.info.Subresource == "binding" && b.Name != c.info.Name {
		writeError(w, apierrors.NewBadRequest("name in URL does not match name in Binding object"))
		return
	}
	if b.Namespace != "" && b.Namespace != c.info.Namespace {
		writeError(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	params, err := parseWriteParams(r.URL.Query(), "create", "")
	if err != nil {
		writeError(w, err)
		return
	}
	bind := func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, err := pods.kind.BindPod(cur, b)
		if _, isStatus := err.(apierrors.APIStatus); err != nil && !isStatus {
			err = apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, b.Name, err)
		}
		return out, err
	}
	ctx := r.Context()
	pre := &storage.Preconditions{UID: b.UID, ResourceVersion: b.ResourceVersion}
	if params.dryRun {
		var cur *unstructured.Unstructured
		if cur, err = pods.store.Get(ctx, c.info.Namespace, b.Name, storage.GetOptions{}); err == nil {
			if err = pre.Check(pods.kind.GroupResource(), cur); err == nil {
				_, err = bind(cur)
			}
		}
	} else {
		_, err = pods.store.GuaranteedUpdate(ctx, c.info.Namespace, b.Name, pre, bind)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeObject(w, r, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Code: http.StatusCreated})
}
