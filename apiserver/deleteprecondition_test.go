package apiserver

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestDeletePreconditionNamesKind: a failed precondition names the kind
// and its group, as kube-apiserver's rest.BeforeDelete words the conflict.
func TestDeletePreconditionNamesKind(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	roles := ts.client.RbacV1().Roles("default")
	role, err := roles.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = roles.Delete(ctx, "r", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}})
	checkStatusErr(t, err, statusWant{code: 409, reason: "Conflict",
		message: fmt.Sprintf(`Operation cannot be fulfilled on Role.rbac.authorization.k8s.io "r": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified`, role.ResourceVersion),
		details: &metav1.StatusDetails{Name: "r", Group: "rbac.authorization.k8s.io", Kind: "Role"}})
}
