package server

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestVolumeProtectionFinalizers: every finalizer strata's admission adds
// to volumes, its controllers remove, as kube-controller-manager's
// persistentvolumeclaim-protection-controller and
// persistentvolume-protection-controller do: a claim no pod uses and a
// volume no claim is bound to, once deleted, go. Without the controllers
// they would stay Terminating, the claim charged to quota.
func TestVolumeProtectionFinalizers(t *testing.T) {
	t.Parallel()
	s := startCtlServer(t, nil)
	ctx := context.Background()
	claims := s.client.CoreV1().PersistentVolumeClaims("default")
	claim, err := claims.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	volumes := s.client.CoreV1().PersistentVolumes()
	volume, err := volumes.Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "disk"},
		Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/disk"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Admission's finalizers: the controllers have something to remove.
	if f := claim.Finalizers; len(f) != 1 || f[0] != "kubernetes.io/pvc-protection" {
		t.Fatalf("claim finalizers %v, want [kubernetes.io/pvc-protection]", f)
	}
	if f := volume.Finalizers; len(f) != 1 || f[0] != "kubernetes.io/pv-protection" {
		t.Fatalf("volume finalizers %v, want [kubernetes.io/pv-protection]", f)
	}
	if err := claims.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := volumes.Delete(ctx, "disk", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for what, get := range map[string]func(context.Context) error{
		"claim":  func(ctx context.Context) error { _, err := claims.Get(ctx, "data", metav1.GetOptions{}); return err },
		"volume": func(ctx context.Context) error { _, err := volumes.Get(ctx, "disk", metav1.GetOptions{}); return err },
	} {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, ctlDeadline, true, func(ctx context.Context) (bool, error) {
			err := get(ctx)
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("the deleted %s is still there after %v: %v", what, ctlDeadline, get(ctx))
		}
	}
}
