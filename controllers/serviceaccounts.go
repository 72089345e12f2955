package controllers

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/certificates/rootcacertpublisher"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
)

// ServiceAccountInformers requests the shared informers ServiceAccounts
// and RootCACertificates follow, so that they start with the shared
// informers (the controllers themselves are made only when they run, as
// kube-controller-manager makes its controllers once it leads). The root
// CA publisher's ConfigMaps are its own (rootCAConfigMaps).
func ServiceAccountInformers(shared informers.SharedInformerFactory) {
	core := shared.Core().V1()
	core.Namespaces().Informer()
	core.ServiceAccounts().Informer()
}

// startServiceAccounts keeps the `default` ServiceAccount in every
// namespace, recreating it when deleted, with kube-controller-manager's
// serviceaccount-controller (NewServiceAccountsController, its default
// options), until ctx ends.
func startServiceAccounts(ctx context.Context, t *term) error {
	shared := t.cfg.Informers
	c, err := serviceaccount.NewServiceAccountsController(klog.FromContext(ctx),
		shared.Core().V1().ServiceAccounts(), shared.Core().V1().Namespaces(), t.cfg.Client,
		serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return errorf(ServiceAccountName, err)
	}
	t.goRun(func() { c.Run(ctx, 1) })
	return nil
}

// errNoRootCA: the server has no CA of its own to publish.
var errNoRootCA = errors.New("no CA to publish in kube-root-ca.crt (plain HTTP, or a serving certificate of the system roots): not run")

// startRootCAPublisher keeps the `kube-root-ca.crt` ConfigMap (key
// ca.crt: the CA clients verify the API's serving certificate with) in
// every namespace, recreating it when deleted and restoring it when
// changed, with kube-controller-manager's
// root-ca-certificate-publisher-controller, until ctx ends. Without a CA
// (plain HTTP, or a --tls-cert-file the system roots verify) there is
// nothing to publish.
func startRootCAPublisher(ctx context.Context, t *term) error {
	if len(t.cfg.RootCA) == 0 {
		return errNoRootCA
	}
	cms := rootCAConfigMaps(t.cfg.Client)
	p, err := rootcacertpublisher.NewPublisher(cms.Core().V1().ConfigMaps(), t.cfg.Informers.Core().V1().Namespaces(),
		t.cfg.Client, t.cfg.RootCA)
	if err != nil {
		return errorf(RootCAPublisherName, err)
	}
	cms.Start(ctx.Done())
	t.goRun(func() { p.Run(ctx, 1) })
	t.goRun(func() { <-ctx.Done(); cms.Shutdown() })
	return nil
}

// rootCAConfigMaps is the root CA publisher's informer factory, for this
// term: its ConfigMaps informer follows the kube-root-ca.crt ConfigMaps
// alone, the only ones the publisher reads. kube-controller-manager hands
// it the shared informer of every ConfigMap, which its other controllers
// need; in strata it would be the only typed copy of every ConfigMap the
// watch cache already holds.
func rootCAConfigMaps(client kubernetes.Interface) informers.SharedInformerFactory {
	name := fields.OneTermEqualSelector("metadata.name", rootcacertpublisher.RootCACertConfigMapName).String()
	return informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(TrimManagedFields),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = name }))
}
