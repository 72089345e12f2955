package registry

import (
	"context"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Shared is what the stores of one server share: the namespace rules, the
// other stores (an eviction writes a PodDisruptionBudget's status), and
// the server's collaborators that some subresources call.
type Shared struct {
	Namespaces *Namespaces
	// Lookup finds the store of a resource served now.
	Lookup func(schema.GroupVersionResource) (*Store, bool)
	// TokenRequest creates the TokenRequests of serviceaccounts/token
	// (upstream's TokenREST); nil leaves the subresource unserved.
	TokenRequest rest.NamedCreater
	// EtcdHealth is etcd's health as componentstatuses report it.
	EtcdHealth func(context.Context) error
	Log        *slog.Logger
}

// CreateRequest is a create of a subresource (or of a resource served by
// a REST of its own, such as bindings): the object the URL names and the
// body, read as the Creater's BodyKind.
type CreateRequest struct {
	Namespace, Name string
	Body            []byte
	DryRun          bool
	FieldValidation FieldValidation
}

// Creater serves a create (POST) the generic store does not: pods/eviction,
// pods/binding and bindings, serviceaccounts/token. The answer is written
// with 201, as kube-apiserver's create handler writes it.
type Creater interface {
	// BodyKind is the kind a request's body is read as.
	BodyKind() *Kind
	Create(ctx context.Context, req *CreateRequest) (out runtime.Object, warnings []string, err error)
}

// Creater is the store that serves creates of subresource ("" for the
// resource itself) in place of the generic create, if any.
func (s *Store) Creater(subresource string) (Creater, bool) {
	c, ok := s.creaters[subresource]
	return c, ok
}

// attachSubresources gives a new store the stores of its kind's
// subresources that the generic store does not serve.
func (s *Store) attachSubresources(sh *Shared) {
	s.creaters = map[string]Creater{}
	k := s.kind
	if k.HasEviction() {
		s.creaters["eviction"] = &evictionREST{pods: s, lookup: sh.Lookup}
	}
	if k.binding {
		s.creaters["binding"] = &bindingREST{pods: s, subresource: true}
	}
	if k.bindsPods {
		s.creaters[""] = &bindingREST{lookup: sh.Lookup}
	}
	if k.HasTokenRequest() && sh.TokenRequest != nil {
		s.creaters["token"] = &tokenREST{rest: sh.TokenRequest}
	}
}

// NotServed is kube-apiserver's 404 for a path it does not serve.
func NotServed() error {
	err := apierrors.NewNotFound(schema.GroupResource{}, "")
	err.ErrStatus.Message = "the server could not find the requested resource"
	err.ErrStatus.Details = nil
	return err
}
