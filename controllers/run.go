package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/controller-manager/pkg/informerfactory"
)

// Config is what the kube-controller-manager controllers run on.
type Config struct {
	// Client and Loopback reach the API as system:apiserver.
	Client   kubernetes.Interface
	Loopback *rest.Config
	// Informers are the server's shared informers and InformersStop
	// ends them: an informer a controller starts runs until the server
	// stops, not only while it leads, since the factory would never
	// start it again for the next term.
	Informers     informers.SharedInformerFactory
	InformersStop <-chan struct{}
	// Selection is --controllers.
	Selection Selection
	// RootCA is what kube-root-ca.crt publishes; none, no publisher.
	RootCA []byte
	// SyncPeriod is how often the garbage collector and the quota
	// controller look at discovery for new resources (0:
	// kube-controller-manager's 30 s). Tests shorten it.
	SyncPeriod time.Duration
	// QuotaResyncPeriod is how often the quota controller recalculates
	// every quota (0: kube-controller-manager's
	// --resource-quota-sync-period, 5 min). Its monitors see deletions
	// and updates at once, creations only then: kube-apiserver's quota
	// admission charges those. Tests shorten it.
	QuotaResyncPeriod time.Duration
	// Log is the server's log, which says what started. (Upstream
	// controllers log through klog, which the server sends there too.)
	Log *slog.Logger
}

func (c Config) syncPeriod() time.Duration {
	if c.SyncPeriod > 0 {
		return c.SyncPeriod
	}
	return GarbageCollectorSyncPeriod
}

// RegisterInformers requests the shared informers of the controllers
// that follow fixed kinds, so that they start with the server's
// (ServiceAccountInformers); the others request theirs when they start.
func RegisterInformers(c Config) {
	if c.Selection.Enabled(ServiceAccountName) || c.Selection.Enabled(RootCAPublisherName) {
		ServiceAccountInformers(c.Informers)
	}
	if c.Selection.Enabled(PolicyStatusName) {
		c.Informers.Admissionregistration().V1().ValidatingAdmissionPolicies().Informer()
	}
}

// term is one leadership term's controllers, as kube-controller-manager's
// ControllerContext: they share the server's typed informers and this
// term's metadata informers (termFactory says which a kind gets), which it
// starts once every controller has registered what it needs (started is
// closed then), and ends with the term. Upstream controllers cannot take
// their event handlers off an informer (kube-controller-manager exits
// when it loses its lease): after a term that ended while the server
// kept running, the shared typed informers still call the old handlers,
// which only add to queues shut down with them.
type term struct {
	cfg      Config
	metadata metadatainformer.SharedInformerFactory
	factory  informerfactory.InformerFactory
	started  chan struct{}
	running  sync.WaitGroup
}

// starters build and start each controller strata runs, by name.
var starters = map[string]func(context.Context, *term) error{
	ServiceAccountName:   startServiceAccounts,
	RootCAPublisherName:  startRootCAPublisher,
	RoleAggregationName:  startRoleAggregation,
	GarbageCollectorName: startGarbageCollector,
	ResourceQuotaName:    startResourceQuota,
	PolicyStatusName:     startPolicyStatus,
	PVCProtectionName:    startPVCProtection,
	PVProtectionName:     startPVProtection,
}

// Run runs the controllers cfg selects until ctx ends (the leader's
// term, RunAsLeader's run) and returns once they have stopped. A
// controller that cannot be built is logged and left out, as
// kube-controller-manager would exit and retry; the others run.
func Run(ctx context.Context, cfg Config) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	md, err := metadata.NewForConfig(cfg.Loopback)
	if err != nil {
		log.Error("controllers: metadata client", "err", err)
		return
	}
	t := &term{cfg: cfg, metadata: metadatainformer.NewSharedInformerFactoryWithOptions(md, 0,
		metadatainformer.WithTransform(TrimManagedFields)), started: make(chan struct{})}
	t.factory = &termFactory{t: t}
	defer t.metadata.Shutdown()
	defer t.running.Wait()
	for _, name := range Supported {
		if !cfg.Selection.Enabled(name) {
			continue
		}
		err := starters[name](ctx, t)
		if errors.Is(err, errNoRootCA) {
			log.Info("Controller not run", "controller", name, "reason", err)
			continue
		}
		if err != nil {
			log.Error("Error starting controller", "controller", name, "err", err)
			continue
		}
		log.Info("Started controller", "controller", name)
	}
	cfg.Informers.Start(cfg.InformersStop)
	t.metadata.Start(ctx.Done())
	close(t.started)
	<-ctx.Done()
}

// goRun runs f in the term until it returns.
func (t *term) goRun(f func()) { t.running.Go(f) }

// termFactory is the informer factory the garbage collector and the
// quota controller start informers through. kube-controller-manager gives
// them typed informers for every built-in kind, shared with its workload
// controllers; strata runs none of those, and a typed informer holds a
// second full copy of every object the watch cache already holds (on a
// loaded server, a large share of its RSS). So only the kinds whose quota evaluators read typed objects get
// the server's typed informers (for the server's lifetime); every other
// resource gets this term's metadata informer, which holds each object's
// metadata alone — all the garbage collector reads, and all an object
// count reads.
type termFactory struct {
	t *term
}

// typedForQuota are the resources whose quota evaluators convert what
// they list to typed objects (k8s.io/kubernetes/pkg/quota/v1/evaluator/
// core's NewEvaluators; its object counts take any object).
var typedForQuota = map[schema.GroupVersionResource]bool{
	corev1.SchemeGroupVersion.WithResource("pods"):                   true,
	corev1.SchemeGroupVersion.WithResource("services"):               true,
	corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"): true,
	resourcev1.SchemeGroupVersion.WithResource("resourceclaims"):     true,
}

func (f *termFactory) ForResource(gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	if typedForQuota[gvr] {
		return f.t.cfg.Informers.ForResource(gvr)
	}
	return f.t.metadata.ForResource(gvr), nil
}

func (f *termFactory) Start(stop <-chan struct{}) {
	f.t.cfg.Informers.Start(f.t.cfg.InformersStop)
	f.t.metadata.Start(stop)
}

// errorf names the controller in an error.
func errorf(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }
