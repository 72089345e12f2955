package authz

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestNew: the modes compose as kube-apiserver composes them:
// system:masters first, then each mode in order, the first to decide
// wins; RBAC reads the informers' objects.
func TestNew(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	root := &user.DefaultInfo{Name: "root", Groups: []string{user.SystemPrivilegedGroup}}
	client := fake.NewClientset(
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "alice"},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cm-reader"}})
	getCM := func(u user.Info, ns string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: "get", Namespace: ns, Resource: "configmaps", APIVersion: "v1",
			Name: "x", ResourceRequest: true}
	}
	for _, tc := range []struct {
		modes  []string
		attrs  authorizer.AttributesRecord
		want   authorizer.Decision
		reason string
	}{
		{modes: []string{"RBAC"}, attrs: getCM(alice, "ns"), want: authorizer.DecisionAllow,
			reason: `RBAC: allowed by RoleBinding "alice/ns" of ClusterRole "cm-reader" to User "alice"`},
		{modes: []string{"RBAC"}, attrs: getCM(alice, "other"), want: authorizer.DecisionNoOpinion},
		{modes: []string{"RBAC"}, attrs: getCM(root, "other"), want: authorizer.DecisionAllow},
		{modes: []string{"AlwaysDeny"}, attrs: getCM(root, "other"), want: authorizer.DecisionAllow},
		{modes: []string{"AlwaysDeny"}, attrs: getCM(alice, "ns"), want: authorizer.DecisionNoOpinion,
			reason: "alwaysdeny: Everything is forbidden."},
		{modes: []string{"AlwaysDeny", "RBAC"}, attrs: getCM(alice, "ns"), want: authorizer.DecisionAllow,
			reason: `RBAC: allowed by RoleBinding "alice/ns" of ClusterRole "cm-reader" to User "alice"`},
		{modes: []string{"AlwaysAllow"}, attrs: getCM(alice, "other"), want: authorizer.DecisionAllow},
	} {
		inf := informers.NewSharedInformerFactory(client, 0)
		a, err := New(context.Background(), Config{Modes: tc.modes, Informers: inf})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		inf.Start(stop)
		inf.WaitForCacheSync(stop)
		got, reason, err := a.Authorize(t.Context(), tc.attrs)
		if got != tc.want || reason != tc.reason || err != nil {
			t.Errorf("%v: %s get configmaps in %q: %v %q %v, want %v %q", tc.modes, tc.attrs.User.GetName(), tc.attrs.Namespace,
				got, reason, err, tc.want, tc.reason)
		}
		close(stop)
		inf.Shutdown()
	}
}

// TestNewRefuses: invalid modes and a missing informer factory are errors.
func TestNewRefuses(t *testing.T) {
	inf := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Modes: []string{"Bogus"}, Informers: inf}, `authorization-mode "Bogus" is not a valid mode`},
		{Config{Modes: []string{"RBAC"}}, "authz: an informer factory is required"},
	} {
		if _, err := New(context.Background(), tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.cfg.Modes, err, tc.want)
		}
	}
}

// TestBindingsFollowChanges: the kept lists of bindings follow creates
// and deletes of RoleBindings and ClusterRoleBindings.
func TestBindingsFollowChanges(t *testing.T) {
	client := fake.NewClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}})
	inf := informers.NewSharedInformerFactory(client, 0)
	a, err := New(context.Background(), Config{Modes: []string{"RBAC"}, Informers: inf})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() { close(stop); inf.Shutdown() }()
	inf.Start(stop)
	inf.WaitForCacheSync(stop)
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	attrs := authorizer.AttributesRecord{User: alice, Verb: "get", Namespace: "ns", Resource: "configmaps",
		APIVersion: "v1", ResourceRequest: true}
	waitDecision := func(want authorizer.Decision) {
		t.Helper()
		for range 200 {
			if d, _, _ := a.Authorize(t.Context(), attrs); d == want {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("the decision did not become %v", want)
	}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cm-reader"}
	subjects := []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}}
	waitDecision(authorizer.DecisionNoOpinion)
	rbs := client.RbacV1().RoleBindings("ns")
	if _, err := rbs.Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Subjects: subjects, RoleRef: ref},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecision(authorizer.DecisionAllow)
	if err := rbs.Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecision(authorizer.DecisionNoOpinion)
	crbs := client.RbacV1().ClusterRoleBindings()
	if _, err := crbs.Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Subjects: subjects,
		RoleRef: ref}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecision(authorizer.DecisionAllow)
	if err := crbs.Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDecision(authorizer.DecisionNoOpinion)
}
