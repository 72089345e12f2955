package controllers

import (
	"context"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
	"k8s.io/kubernetes/pkg/controller/volume/pvprotection"
)

// startPVCProtection runs kube-controller-manager's
// persistentvolumeclaim-protection-controller until ctx ends: it removes
// the kubernetes.io/pvc-protection finalizer, which admission adds to
// every PersistentVolumeClaim, from a claim being deleted once no pod uses
// it, so that the claim goes (and its quota is released). strata adds the
// finalizer, so it must run what removes it.
func startPVCProtection(ctx context.Context, t *term) error {
	core := t.cfg.Informers.Core().V1()
	c, err := pvcprotection.NewPVCProtectionController(klog.FromContext(ctx), core.PersistentVolumeClaims(), core.Pods(), t.cfg.Client)
	if err != nil {
		return errorf(PVCProtectionName, err)
	}
	t.goRun(func() { c.Run(ctx, 1) })
	return nil
}

// startPVProtection runs kube-controller-manager's
// persistentvolume-protection-controller until ctx ends: it removes the
// kubernetes.io/pv-protection finalizer admission adds to every
// PersistentVolume from a volume being deleted once no claim is bound to
// it.
func startPVProtection(ctx context.Context, t *term) error {
	c, err := pvprotection.NewPVProtectionController(klog.FromContext(ctx), t.cfg.Informers.Core().V1().PersistentVolumes(), t.cfg.Client)
	if err != nil {
		return errorf(PVProtectionName, err)
	}
	t.goRun(func() { c.Run(ctx, 1) })
	return nil
}
