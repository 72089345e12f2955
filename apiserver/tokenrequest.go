package apiserver

import (
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"

	"github.com/stratadev/strata/registry"
)

// serveTokenRequest answers POST serviceaccounts/{name}/token as
// kube-apiserver's create handler does for upstream's TokenREST
// (Config.TokenRequest): the body is an authentication.k8s.io/v1
// TokenRequest, defaulted; a namespace in it must be the URL's; the
// namespace travels in the context; TokenREST's warnings (an expiration
// shortened to the maximum) become Warning headers; the answer is the
// TokenRequest with its token, 201.
func (s *Server) serveTokenRequest(w http.ResponseWriter, r *http.Request, c *call) {
	if s.cfg.TokenRequest == nil {
		writeError(w, notFoundPath())
		return
	}
	body, err := s.readObject(r, registry.TokenRequestKind())
	if err != nil {
		writeError(w, err)
		return
	}
	params, err := parseWriteParams(r.URL.Query(), "create", "")
	if err != nil {
		writeError(w, err)
		return
	}
	req, warnings, err := registry.DecodeTokenRequest(body, params.fieldValidation)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Namespace != "" && req.Namespace != c.info.Namespace {
		writeError(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	rec := &warningList{}
	ctx := genericapirequest.WithNamespace(r.Context(), c.info.Namespace)
	ctx = warning.WithWarningRecorder(ctx, rec)
	var dryRun []string
	if params.dryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	out, err := s.cfg.TokenRequest.Create(ctx, c.info.Name, req, nil, &metav1.CreateOptions{DryRun: dryRun})
	if err != nil {
		writeError(w, err)
		return
	}
	v1, err := registry.TokenRequestV1(out)
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	addWarnings(w, append(warnings, rec.texts()...))
	writeJSON(w, http.StatusCreated, v1)
}

// warningList collects the warnings upstream code adds to the context.
type warningList struct {
	mu   sync.Mutex
	list []string
}

func (w *warningList) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningList) texts() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.list
}
