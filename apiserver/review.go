package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// serveReview answers the reviews of authentication.k8s.io and
// authorization.k8s.io (SelfSubjectAccessReview, TokenReview, ...) as
// kube-apiserver's create handler and their upstream REST do: the body is
// decoded as a create's (fieldValidation, dryRun and fieldManager as on
// any create; managedFields recorded), the REST fills the status from the
// requesting user, the authorizer or the token authenticator, and the
// object comes back 201; nothing is stored. kube-apiserver registers only
// POST on the collection: other verbs there are 405, other paths 404.
func (s *Server) serveReview(w http.ResponseWriter, r *http.Request, c *call) {
	info := c.info
	if info.Name != "" || info.Subresource != "" || (c.res.kind.Namespaced && info.Namespace == "") {
		writeError(w, routeError(http.StatusNotFound))
		return
	}
	if info.Verb != "create" {
		writeError(w, routeError(http.StatusMethodNotAllowed))
		return
	}
	// kube-apiserver installs the reviews without a table convertor: no
	// Table is negotiated (an Accept of Tables alone is 406).
	m, err := negotiateFor(r, endpoint{protobuf: c.res.kind.HasProtobuf(), noTable: true}, false)
	if err != nil {
		writeError(w, err)
		return
	}
	c.media = m
	params, obj, decodeWarnings, err := s.readDecoded(r, c, "create")
	if err != nil {
		writeError(w, err)
		return
	}
	obj = s.recordUpdate(c, nil, obj, fieldmanager.ManagerName(params.fieldManager, r.UserAgent()))
	warnings := &registry.Warnings{}
	ctx := c.res.kind.Context(r.Context(), info.Namespace, "create", "", warnings)
	options := &metav1.CreateOptions{FieldManager: params.fieldManager, FieldValidation: string(params.fieldValidation)}
	if params.dryRun {
		options.DryRun = []string{metav1.DryRunAll}
	}
	out, err := c.res.kind.Review(ctx, obj, s.reviewers(), options)
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	if c.media.form == outputPartial {
		writeTransformed(w, r, c, http.StatusCreated, out)
		return
	}
	writeResult(w, c, http.StatusCreated, out.Object)
}

// reviewers are what the reviews consult, from the configuration.
func (s *Server) reviewers() registry.Reviewers {
	return registry.Reviewers{Authorizer: s.cfg.Authorizer, RuleResolver: s.cfg.RuleResolver,
		TokenAuthenticator: s.cfg.TokenAuthenticator, APIAudiences: s.cfg.APIAudiences}
}

// routeError is kube-apiserver's answer to a request its routes do not
// take (go-restful's 404 or 405, through the server's service error
// handler): the generic Status of the code, with empty details.
func routeError(code int) error {
	return apierrors.NewGenericServerResponse(code, "", schema.GroupResource{}, "", "", 0, false)
}
