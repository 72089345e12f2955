package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// methodNotAllowed is kube-apiserver's answer to a method a built-in
// resource's path does not serve: go-restful finds no route for it, and
// kube-apiserver's service error handler turns that into the generic
// Status of the code (no verb in the message, empty details).
func methodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "",
		"405: Method Not Allowed", 0, false)
}

// refuseMethod answers a verb res does not serve at the path of info: for
// built-in resources go-restful's 405; for custom resources the
// apiextensions handler's answers, which has no router in front: a
// namespaced kind outside a namespace is passed on to the not-found
// handler (but for list and watch), whose answer is net/http's plain 404;
// a PUT or PATCH without a name is its namer's 400; any other verb is
// NewMethodNotSupported, naming it.
func refuseMethod(w http.ResponseWriter, r *http.Request, res *resource, info *genericapirequest.RequestInfo) {
	switch {
	case res.kind.CRD() == nil:
		writeError(w, methodNotAllowed())
	case res.kind.Namespaced && info.Namespace == "" && !oneOf(info.Verb, "list", "watch"):
		http.NotFound(w, r)
	case oneOf(info.Verb, "update", "patch") && info.Name == "":
		writeError(w, apierrors.NewBadRequest("name must be provided"))
	default:
		writeError(w, apierrors.NewMethodNotSupported(res.kind.GroupResource(), info.Verb))
	}
}

// missingSubresource is the answer to a subresource res lacks: the 404 of
// a path without a route for built-in resources, the apiextensions
// handler's NotFound naming the object for custom resources.
func missingSubresource(res *resource, info *genericapirequest.RequestInfo) error {
	if res.kind.CRD() == nil {
		return notFoundPath()
	}
	return apierrors.NewNotFound(res.kind.GroupResource(), info.Name)
}
