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

// Subresource is the store of one of a resource's subresources that is not
// the object itself through a strategy of its own (status, finalize,
// approval, ephemeralcontainers and resize are updates of the object,
// Store.Update with the subresource named): a Creater, a Viewer or a
// Connecter. Where upstream's REST code serves the subresource, its store
// wraps that code.
type Subresource any

// Subresource is the store of the subresource name ("" for a resource
// whose creates a REST of its own serves, such as bindings).
func (s *Store) Subresource(name string) (Subresource, bool) {
	sub, ok := s.subresources[name]
	return sub, ok
}

// Creater is the store of subresource if it serves creates.
func (s *Store) Creater(subresource string) (Creater, bool) {
	c, ok := s.subresources[subresource].(Creater)
	return c, ok
}

// Viewer is the store of subresource if it is a view of the object.
func (s *Store) Viewer(subresource string) (Viewer, bool) {
	v, ok := s.subresources[subresource].(Viewer)
	return v, ok
}

// Connecter is the store of subresource if kube-apiserver serves it
// through a kubelet or a proxy.
func (s *Store) Connecter(subresource string) (Connecter, bool) {
	c, ok := s.subresources[subresource].(Connecter)
	return c, ok
}

// attachSubresources gives a new store the stores of its kind's
// subresources.
func (s *Store) attachSubresources(sh *Shared) {
	s.subresources = map[string]Subresource{}
	k := s.kind
	if k.HasEviction() {
		s.subresources["eviction"] = &evictionREST{pods: s, lookup: sh.Lookup}
	}
	if k.binding {
		s.subresources["binding"] = &bindingREST{pods: s, subresource: true}
	}
	if k.bindsPods {
		s.subresources[""] = &bindingREST{lookup: sh.Lookup}
	}
	if k.HasTokenRequest() && sh.TokenRequest != nil {
		s.subresources["token"] = &tokenREST{rest: sh.TokenRequest}
	}
	if k.HasScale() {
		s.subresources["scale"] = scaleREST{s}
	}
	for _, sub := range k.more {
		if sub.kubelet {
			s.subresources[sub.name] = &kubeletREST{store: s, subresource: sub.name, lookup: sh.Lookup}
		}
	}
}

// NotServed is kube-apiserver's 404 for a path it does not serve.
func NotServed() error {
	err := apierrors.NewNotFound(schema.GroupResource{}, "")
	err.ErrStatus.Message = "the server could not find the requested resource"
	err.ErrStatus.Details = nil
	return err
}
