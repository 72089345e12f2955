package controllers

import (
	"context"
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
)

// ServiceAccountInformers requests the informers ServiceAccounts and
// RootCACertificates follow, so that they start with the shared informers
// (the controllers themselves are made only when they run, as
// kube-controller-manager makes its controllers once it leads).
func ServiceAccountInformers(shared informers.SharedInformerFactory) {
	core := shared.Core().V1()
	core.Namespaces().Informer()
	core.ServiceAccounts().Informer()
	core.ConfigMaps().Informer()
}

// ServiceAccounts keeps the `default` ServiceAccount in every namespace,
// recreating it when deleted, with kube-controller-manager's
// serviceaccount-controller (NewServiceAccountsController, its default
// options), until ctx ends.
func ServiceAccounts(ctx context.Context, client kubernetes.Interface, shared informers.SharedInformerFactory) error {
	c, err := serviceaccount.NewServiceAccountsController(klog.FromContext(ctx),
		shared.Core().V1().ServiceAccounts(), shared.Core().V1().Namespaces(), client,
		serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return fmt.Errorf("serviceaccount controller: %w", err)
	}
	go c.Run(ctx, 1)
	return nil
}

// RootCACertificates keeps the `kube-root-ca.crt` ConfigMap (key ca.crt:
// caPEM, the CA clients verify the API's serving certificate with) in
// every namespace, recreating it when deleted and restoring it when
// changed, with kube-controller-manager's root-ca-certificate-publisher,
// until ctx ends.
func RootCACertificates(ctx context.Context, client kubernetes.Interface, shared informers.SharedInformerFactory, caPEM []byte) error {
	p, err := rootcacertpublisher.NewPublisher(shared.Core().V1().ConfigMaps(), shared.Core().V1().Namespaces(), client, caPEM)
	if err != nil {
		return fmt.Errorf("root CA certificate publisher: %w", err)
	}
	go p.Run(ctx, 1)
	return nil
}
