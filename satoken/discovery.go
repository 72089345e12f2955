package satoken

import (
	"net/http"

	restful "github.com/emicklei/go-restful/v3"
	"k8s.io/kubernetes/pkg/routes"
	token "k8s.io/kubernetes/pkg/serviceaccount"
)

// Paths of the OIDC discovery documents.
const (
	OpenIDConfigPath = token.OpenIDConfigPath
	JWKSPath         = token.JWKSPath
)

// DiscoveryHandler serves the issuer's OIDC discovery documents at
// OpenIDConfigPath and JWKSPath with upstream's provider and routes (other
// methods are go-restful's 405, as on kube-apiserver). Like kube-apiserver,
// an issuer that is not an https URL has no documents: the error says why,
// and the caller logs it and serves without them. externalAddress is the
// host:port clients reach the API at, for the default jwks_uri.
func (i *Issuer) DiscoveryHandler(externalAddress string) (http.Handler, error) {
	provider, err := token.NewOpenIDMetadataProvider(i.cfg.Issuers[0], i.cfg.JWKSURI, externalAddress, i.keys)
	if err != nil {
		return nil, err
	}
	container := restful.NewContainer()
	routes.NewOpenIDMetadataServer(provider).Install(container)
	return container, nil
}
