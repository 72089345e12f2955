package bootstrap

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controlplane/controller/clusterauthenticationtrust"
	"k8s.io/kubernetes/pkg/controlplane/controller/legacytokentracking"
)

// AuthenticationInfo publishes in kube-system what kube-apiserver publishes
// there for the components that authenticate through it: the ConfigMap
// extension-apiserver-authentication, which kube-controller-manager,
// kube-scheduler and aggregated API servers read for delegated
// authentication (they refuse to start without it), and
// kube-apiserver-legacy-service-account-token-tracking, which
// kube-controller-manager's legacy token cleaner reads. Both are kept by
// kube-apiserver's own controllers, which every replica runs (the ConfigMap
// is the union of what each replica requires).
type AuthenticationInfo struct {
	// Client reaches the API (the loopback client).
	Client kubernetes.Interface
	// ClientCA is the PEM bundle of --client-ca-file: the CA whose client
	// certificates the server accepts, published as client-ca-file. Empty
	// when there is none, as kube-apiserver publishes no client-ca-file
	// then. strata serves no request-header authentication, so the
	// requestheader-* keys are never written.
	ClientCA []byte
}

// Start runs kube-apiserver's cluster-authentication-info controller
// (clusterauthenticationtrust) and its legacy-token-tracking controller
// until the returned stop is called, which waits for them to end.
func (a AuthenticationInfo) Start() (stop func(), err error) {
	var info clusterauthenticationtrust.ClusterAuthenticationInfo
	if len(a.ClientCA) > 0 {
		// kube-apiserver's name for the --client-ca-file content.
		ca, err := dynamiccertificates.NewStaticCAContent("client-ca-bundle", a.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("client CA bundle for extension-apiserver-authentication: %w", err)
		}
		info.ClientCA = ca
	}
	trust := clusterauthenticationtrust.NewClusterAuthenticationTrustController(info, a.Client)
	tracking := legacytokentracking.NewController(a.Client)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { trust.Run(ctx, 1) })
	wg.Go(func() { tracking.RunWithContext(ctx) })
	return func() { cancel(); wg.Wait() }, nil
}
