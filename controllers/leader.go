package controllers

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseName is the Lease in kube-system that servers sharing one etcd
// elect the runner of their controllers with. It is not
// kube-controller-manager's lease: a kube-controller-manager pointed at
// strata runs its own controllers beside these.
const LeaseName = "strata-controllers"

// kube-controller-manager's leader election timing (its flag defaults).
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

// RunAsLeader calls run whenever this server (identity: the same across
// restarts, so that a restarted server leads again at once) becomes the
// holder of the Lease kube-system/LeaseName, with a context that ends when
// it stops leading or ctx ends; run must return only once what it started
// has stopped. Among the servers sharing one etcd, one runs the
// controllers at a time, and two servers never fight over an object (two
// kube-root-ca.crt publishers with different CAs would rewrite it
// forever). It returns when ctx ends, after run has returned, releasing
// the Lease only then, so that the next leader starts as soon as this one
// has stopped and never before.
func RunAsLeader(ctx context.Context, client kubernetes.Interface, identity string, run func(context.Context)) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: LeaseName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		campaign(ctx, lock, run)
	}
}

// campaign runs one election: it returns when leadership is lost (or
// never gained before ctx ended) and run has returned.
func campaign(ctx context.Context, lock resourcelock.Interface, run func(context.Context)) {
	// The election has its own context: ending it releases the Lease,
	// which must wait until run has stopped the controllers.
	election, endElection := context.WithCancel(context.Background())
	defer endElection()
	var (
		mu      sync.Mutex
		over    bool // no run may start any more
		running sync.WaitGroup
	)
	finish := func() {
		mu.Lock()
		over = true
		mu.Unlock()
		running.Wait()
	}
	started := func(leading context.Context) {
		mu.Lock()
		if over {
			mu.Unlock()
			return
		}
		running.Add(1)
		mu.Unlock()
		defer running.Done()
		term, cancel := context.WithCancel(leading)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		run(term)
	}
	defer context.AfterFunc(ctx, func() {
		finish()
		endElection()
	})()
	// RunOrDie returns when leadership is lost (its context then ends, and
	// with it run's) or when the election ends.
	leaderelection.RunOrDie(election, leaderelection.LeaderElectionConfig{
		Lock: lock, Name: LeaseName, ReleaseOnCancel: true,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: started, OnStoppedLeading: func() {}},
	})
	finish()
}
