package apiserver

import (
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/registry"
)

// serveDelete answers DELETE of one object. Without finalizers the object
// goes and the answer is a Success Status naming it; with finalizers it
// gets a deletionTimestamp and is returned, and goes when an update removes
// its last finalizer (registry.Store.Delete).
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, c *call) {
	opts, err := s.deleteOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if unsafeDelete(opts) {
		s.serveUnsafeDelete(w, r, c, opts)
		return
	}
	adm := s.admission(r, c, opts, len(opts.DryRun) > 0)
	out, deleted, err := c.res.store.Delete(r.Context(), c.info.Namespace, c.info.Name, opts, adm)
	if err != nil {
		writeError(w, err)
		return
	}
	if !deleted {
		// kube-apiserver's delete handler answers 202 to the deprecated
		// orphanDependents=false when the object stays, and 200 otherwise.
		code := http.StatusOK
		//nolint:staticcheck // SA1019: as upstream's handler
		if o := opts.OrphanDependents; o != nil && !*o {
			code = http.StatusAccepted
		}
		writeWritten(w, r, c, code, registry.Written{Unstructured: out})
		return
	}
	gr := c.res.kind.GroupResource()
	writeResult(w, c, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: out.GetName(), Group: gr.Group, Kind: gr.Resource, UID: out.GetUID()},
	})
}

// deleteOptions reads DeleteOptions from the body (if any) and the query.
func (s *Server) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	opts, err := registry.DecodeDeleteOptions(body, r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	if err := queryDeleteOptions(r.URL.Query(), opts); err != nil {
		return nil, err
	}
	if errs := metavalidation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

func queryDeleteOptions(q url.Values, opts *metav1.DeleteOptions) error {
	if len(q) == 0 {
		return nil
	}
	var fromQuery metav1.DeleteOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &fromQuery); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if fromQuery.PropagationPolicy != nil {
		opts.PropagationPolicy = fromQuery.PropagationPolicy
	}
	//nolint:staticcheck // SA1019: kube-apiserver still honours orphanDependents
	if fromQuery.OrphanDependents != nil {
		opts.OrphanDependents = fromQuery.OrphanDependents //nolint:staticcheck // as above
	}
	if fromQuery.GracePeriodSeconds != nil {
		opts.GracePeriodSeconds = fromQuery.GracePeriodSeconds
	}
	if len(fromQuery.DryRun) > 0 {
		opts.DryRun = fromQuery.DryRun
	}
	if fromQuery.IgnoreStoreReadErrorWithClusterBreakingPotential != nil {
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = fromQuery.IgnoreStoreReadErrorWithClusterBreakingPotential
	}
	return nil
}
