package testenv_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/testenv"
)

func createNamespace(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createConfigMap(t *testing.T, c kubernetes.Interface, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	got, err := c.CoreV1().ConfigMaps(cm.Namespace).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func configMapNames(t *testing.T, c kubernetes.Interface, ns string) []string {
	t.Helper()
	list, err := c.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range list.Items {
		names = append(names, cm.Name)
	}
	return names
}

// A test's namespace holds only what the test made: no kube-root-ca.crt,
// no default ServiceAccount, as with envtest's kube-apiserver.
func TestNamespaceHoldsOnlyTheTestsObjects(t *testing.T) {
	c := clientFor(t, testenv.Start(t))
	createNamespace(t, c, "test")
	createConfigMap(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "test"}})
	if got := configMapNames(t, c, "test"); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("ConfigMaps in test: %q, want [mine]", got)
	}
	sas, err := c.CoreV1().ServiceAccounts("test").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sas.Items) != 0 {
		t.Errorf("ServiceAccounts in test: %d, want none", len(sas.Items))
	}
}

func TestGarbageCollectorDeletesDependents(t *testing.T) {
	c := clientFor(t, testenv.Start(t))
	owner := createConfigMap(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "default"}})
	createConfigMap(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}})
	if err := c.CoreV1().ConfigMaps("default").Delete(t.Context(), "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the garbage collector deletes the dependent", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps("default").Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

func TestNamespaceDeletionFinishes(t *testing.T) {
	c := clientFor(t, testenv.Start(t))
	createNamespace(t, c, "doomed")
	createConfigMap(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "content", Namespace: "doomed"}})
	if err := c.CoreV1().Namespaces().Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the namespace goes", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// Parallel tests each have a server of their own: each sees only the
// ConfigMap it made, under a name every one of them uses.
func TestParallelServers(t *testing.T) {
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			c := clientFor(t, testenv.Start(t))
			createConfigMap(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared-name", Namespace: "default"},
				Data: map[string]string{"test": fmt.Sprint(i)}})
			cm, err := c.CoreV1().ConfigMaps("default").Get(t.Context(), "shared-name", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := cm.Data["test"]; got != fmt.Sprint(i) {
				t.Errorf("data.test = %q, want %d", got, i)
			}
			if got := configMapNames(t, c, "default"); !slices.Equal(got, []string{"shared-name"}) {
				t.Errorf("ConfigMaps in default: %q, want [shared-name]", got)
			}
		})
	}
}

// A user added by AddUser is authenticated by its certificate, with its
// groups, and authorized by RBAC like any other user.
func TestAddUserIsAuthorizedByRBAC(t *testing.T) {
	env := testenv.New(t)
	admin, alice := clientFor(t, env.Config), clientFor(t, env.AddUser("alice", "devs"))
	review, err := alice.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "alice" || !slices.Equal(u.Groups, []string{"devs", "system:authenticated"}) {
		t.Errorf("alice is %q in %q, want alice in [devs system:authenticated]", u.Username, u.Groups)
	}
	_, err = alice.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	const forbidden = `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"`
	if !apierrors.IsForbidden(err) || err.Error() != forbidden {
		t.Fatalf("alice's list before any binding: %v, want Forbidden: %s", err, forbidden)
	}
	// A Role of the test's own: the built-in view, edit and admin roles
	// are aggregated, their rules filled in by a controller the package
	// leaves off by default (as envtest's API server has none).
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}}
	if _, err := admin.RbacV1().Roles("default").Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "devs-read", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-configmaps"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "devs"}}}
	if _, err := admin.RbacV1().RoleBindings("default").Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice may list ConfigMaps once her group is bound to a Role that allows it", func(ctx context.Context) (bool, error) {
		_, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	_, err = alice.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("alice's create with a Role to get and list: %v, want Forbidden", err)
	}
}

// Controllers turns on more controllers: with the service-account and root
// CA publisher controllers, namespaces get their default ServiceAccount
// and kube-root-ca.crt as on a cluster.
func TestControllersOption(t *testing.T) {
	c := clientFor(t, testenv.Start(t, testenv.Controllers("*")))
	createNamespace(t, c, "test")
	eventually(t, "the default ServiceAccount appears", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ServiceAccounts("test").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	eventually(t, "kube-root-ca.crt appears", func(ctx context.Context) (bool, error) {
		_, err := c.CoreV1().ConfigMaps("test").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, err
	})
}
