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

// methodRefusal is the answer to a verb res does not serve at the path of
// info: for built-in resources go-restful's 405, for custom resources
// apiextensions-apiserver's, which names the verb and the resource
// (NewMethodNotSupported; its handler has no router in front).
func methodRefusal(res *resource, info *genericapirequest.RequestInfo) error {
	if res.kind.CRD() == nil {
		return methodNotAllowed()
	}
	return apierrors.NewMethodNotSupported(res.kind.GroupResource(), info.Verb)
}
