package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"
)

// unsafeDelete reports whether a delete asks for kube-apiserver's unsafe
// deletion of an object whose stored bytes do not decode. kube-apiserver
// honours it behind the AllowUnsafeMalformedObjectDeletion feature gate,
// on by default since v1.37; strata has no gates and always does.
func unsafeDelete(opts *metav1.DeleteOptions) bool {
	return opts != nil && ptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false)
}

// serveUnsafeDelete removes a corrupt object without reading it: no
// preconditions, finalizers, admission or release of what it held, as
// kube-apiserver's corrupt object deleter. The option's conflicts with
// other options were refused by ValidateDeleteOptions.
func (s *Server) serveUnsafeDelete(w http.ResponseWriter, r *http.Request, c *call, opts *metav1.DeleteOptions) {
	if err := s.authorizeUnsafeDelete(r, c); err != nil {
		writeError(w, err)
		return
	}
	s.log.Warn("unsafe deletion of an object that may not decode", "resource", c.res.kind.GroupResource().String(),
		"namespace", c.info.Namespace, "name", c.info.Name, "dryRun", len(opts.DryRun) > 0)
	if err := c.res.store.DeleteCorrupt(r.Context(), c.info.Namespace, c.info.Name, len(opts.DryRun) > 0); err != nil {
		writeError(w, err)
		return
	}
	// kube-apiserver's delete handler fills this Status in when the
	// deleter returns no object, which the corrupt object deleter never has.
	writeResult(w, c, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Code:     http.StatusOK,
		Details:  &metav1.StatusDetails{Name: c.info.Name, Kind: c.res.kind.GVK.Kind},
	})
}

// unsafeDeleteVerb is the verb kube-apiserver also requires, beside
// "delete", for an unsafe deletion.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// authorizeUnsafeDelete asks Config.Authorizer (nil allows everything) for
// unsafeDeleteVerb on the object, as kube-apiserver's delete handler does,
// and refuses with its 403.
func (s *Server) authorizeUnsafeDelete(r *http.Request, c *call) error {
	if s.cfg.Authorizer == nil {
		return nil
	}
	u, _ := genericapirequest.UserFrom(r.Context())
	gr := c.res.kind.GroupResource()
	record := authorizer.AttributesRecord{User: u, Verb: unsafeDeleteVerb, Namespace: c.info.Namespace, Name: c.info.Name,
		APIGroup: gr.Group, APIVersion: c.info.APIVersion, Resource: gr.Resource, ResourceRequest: true}
	decision, reason, err := s.cfg.Authorizer.Authorize(r.Context(), record)
	switch {
	case err != nil:
		return apierrors.NewForbidden(gr, c.info.Name, fmt.Errorf("error while checking permission for %q, %w", unsafeDeleteVerb, err))
	case decision != authorizer.DecisionAllow:
		return apierrors.NewForbidden(gr, c.info.Name, fmt.Errorf("not permitted to do %q, reason: %s", unsafeDeleteVerb, reason))
	}
	return nil
}

// refuseUnsafeDeleteCollection is kube-apiserver's 422 for the option on
// a collection delete.
func refuseUnsafeDeleteCollection(opts *metav1.DeleteOptions) error {
	if !unsafeDelete(opts) {
		return nil
	}
	errs := field.ErrorList{field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
		"is not allowed with DELETECOLLECTION, try again after removing the option")}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
}
