package controllers

import (
	"context"
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

// RunAsLeader calls start whenever this server (identity: the same across
// restarts, so that a restarted server leads again at once) becomes the
// holder of the Lease kube-system/LeaseName, with a context that ends when
// it stops leading, as kube-controller-manager runs its controllers: among
// the servers sharing one etcd, one runs them at a time, and two
// servers never fight over an object (two kube-root-ca.crt publishers with
// different CAs would rewrite it forever). It returns when ctx ends,
// releasing the Lease.
func RunAsLeader(ctx context.Context, client kubernetes.Interface, identity string, start func(context.Context)) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: LeaseName},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		// RunOrDie returns when leadership is lost (or never gained
		// before ctx ended); the next round campaigns again.
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: lock, Name: LeaseName, ReleaseOnCancel: true,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: start, OnStoppedLeading: func() {}},
		})
	}
}
