package server

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/stratadev/strata/authz"
	"github.com/stratadev/strata/controllers"
)

// TestPolicySeen: readiness under RBAC waits until the authorizer's
// informers hold every object of the bootstrap policy, and without RBAC
// waits for nothing (and asks for no informer).
func TestPolicySeen(t *testing.T) {
	client := fake.NewClientset()
	inf := informers.NewSharedInformerFactory(client, 0)
	if seen := policySeen(&Options{AuthorizationModes: []string{authz.ModeAlwaysAllow}}, inf); seen(t.Context()) != nil {
		t.Fatal("AlwaysAllow waited for the policy")
	}
	if n := len(inf.WaitForCacheSync(make(chan struct{}))); n != 0 {
		t.Fatalf("AlwaysAllow asked for %d informers", n)
	}

	seen := policySeen(&Options{AuthorizationModes: []string{authz.ModeNode, authz.ModeRBAC}}, inf)
	stop := make(chan struct{})
	defer close(stop)
	inf.Start(stop)
	inf.WaitForCacheSync(stop)
	waitBriefly := func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		return seen(ctx)
	}
	if err := waitBriefly(); err == nil || !strings.Contains(err.Error(), "have not seen the bootstrap policy") {
		t.Fatalf("no policy yet: got %v", err)
	}

	ctx := t.Context()
	rbac := client.RbacV1()
	meta := func(key string) metav1.ObjectMeta {
		ns, name, namespaced := strings.Cut(key, "/")
		if !namespaced {
			return metav1.ObjectMeta{Name: key}
		}
		return metav1.ObjectMeta{Namespace: ns, Name: name}
	}
	createRoleBinding := func(key string) error {
		m := meta(key)
		_, err := rbac.RoleBindings(m.Namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: m}, metav1.CreateOptions{})
		return err
	}
	clusterRoles, clusterRoleBindings, roles, roleBindings := controllers.PolicyKeys()
	last := roleBindings[len(roleBindings)-1]
	for _, kind := range []struct {
		keys   []string
		create func(key string) error
	}{
		{clusterRoles, func(key string) error {
			_, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta(key)}, metav1.CreateOptions{})
			return err
		}},
		{clusterRoleBindings, func(key string) error {
			_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta(key)}, metav1.CreateOptions{})
			return err
		}},
		{roles, func(key string) error {
			m := meta(key)
			_, err := rbac.Roles(m.Namespace).Create(ctx, &rbacv1.Role{ObjectMeta: m}, metav1.CreateOptions{})
			return err
		}},
		{roleBindings[:len(roleBindings)-1], createRoleBinding},
	} {
		for _, key := range kind.keys {
			if err := kind.create(key); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := waitBriefly(); err == nil {
		t.Fatalf("ready without role binding %s", last)
	}
	if err := createRoleBinding(last); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := seen(done); err != nil {
		t.Fatalf("the whole policy is in the informers: %v", err)
	}
}
