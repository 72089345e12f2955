package satoken

import (
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	controller "k8s.io/kubernetes/pkg/controller/serviceaccount"
	token "k8s.io/kubernetes/pkg/serviceaccount"
)

// Authenticator checks service-account tokens as kube-apiserver does with
// --service-account-lookup (its default): the signature by one of the
// verifying keys, an accepted issuer, an audience of the API's, the
// expiry, and that the account, and a bound pod, secret or node, still
// exist with the UID the token names. Objects are looked up in the shared
// informers' caches, and through client when a cache does not have them
// (kube-apiserver's getter, NewGetterFromClient). The informers must be
// started by the caller; the user is system:serviceaccount:NS:NAME in
// system:serviceaccounts and system:serviceaccounts:NS, with the bound
// pod's name and UID, the node's, and the token's credential ID as extra.
func (i *Issuer) Authenticator(client kubernetes.Interface, shared informers.SharedInformerFactory) authenticator.Token {
	core := shared.Core().V1()
	webhooks := shared.Admissionregistration().V1()
	getter := controller.NewGetterFromClient(client, core.Secrets().Lister(), core.ServiceAccounts().Lister(),
		core.Pods().Lister(), core.Nodes().Lister(),
		webhooks.ValidatingWebhookConfigurations().Lister(), webhooks.MutatingWebhookConfigurations().Lister())
	return token.JWTTokenAuthenticator(i.cfg.Issuers, i.keys, i.cfg.APIAudiences, token.NewValidator(getter))
}
