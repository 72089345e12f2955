package apiserver

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestClientValidationErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	deps := ts.client.AppsV1().Deployments("default")
	if _, err := deps.Create(ctx, newDeployment("existing", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	invalid := func(kind, group, name string, causes ...metav1.StatusCause) *metav1.StatusDetails {
		return &metav1.StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes}
	}
	tests := []struct {
		name    string
		do      func() error
		message string
		details *metav1.StatusDetails
	}{
		{
			name: "configmap name",
			do: func() error {
				_, err := ts.client.CoreV1().ConfigMaps("default").Create(ctx, newConfigMap("Bad_Name", nil), metav1.CreateOptions{})
				return err
			},
			message: `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			details: invalid("ConfigMap", "", "Bad_Name", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				Field:   "metadata.name"}),
		},
		{
			name: "no name",
			do: func() error {
				_, err := ts.client.CoreV1().ConfigMaps("default").Create(ctx, newConfigMap("", nil), metav1.CreateOptions{})
				return err
			},
			message: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`,
			details: invalid("ConfigMap", "", "", metav1.StatusCause{Type: metav1.CauseTypeFieldValueRequired,
				Message: "Required value: name or generateName is required", Field: "metadata.name"}),
		},
		{
			name: "negative replicas",
			do: func() error {
				d := newDeployment("negative", "nginx:1")
				d.Spec.Replicas = ptr.To[int32](-1)
				_, err := deps.Create(ctx, d, metav1.CreateOptions{})
				return err
			},
			message: `Deployment.apps "negative" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
			details: invalid("Deployment", "apps", "negative", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: "Invalid value: -1: must be greater than or equal to 0", Field: "spec.replicas"}),
		},
		{
			name: "selector does not match the template",
			do: func() error {
				d := newDeployment("mismatch", "nginx:1")
				d.Spec.Template.Labels = map[string]string{"app": "other"}
				_, err := deps.Create(ctx, d, metav1.CreateOptions{})
				return err
			},
			message: "Deployment.apps \"mismatch\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`",
			details: invalid("Deployment", "apps", "mismatch", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`",
				Field:   "spec.template.metadata.labels"}),
		},
		{
			name: "selector changed on update",
			do: func() error {
				d := newDeployment("existing", "nginx:1")
				d.Spec.Selector.MatchLabels = map[string]string{"app": "moved"}
				d.Spec.Template.Labels = map[string]string{"app": "moved"}
				_, err := deps.Update(ctx, d, metav1.UpdateOptions{})
				return err
			},
			message: `Deployment.apps "existing" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`,
			details: invalid("Deployment", "apps", "existing", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`, Field: "spec.selector"}),
		},
		{
			name: "selector changed by a patch",
			do: func() error {
				_, err := deps.Patch(ctx, "existing", types.StrategicMergePatchType,
					[]byte(`{"spec":{"selector":{"matchLabels":{"app":"moved"}},"template":{"metadata":{"labels":{"app":"moved"}}}}}`), metav1.PatchOptions{})
				return err
			},
			message: `Deployment.apps "existing" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`,
			details: invalid("Deployment", "apps", "existing", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`, Field: "spec.selector"}),
		},
		{
			name: "clusterrole name",
			do: func() error {
				_, err := ts.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a/b"}}, metav1.CreateOptions{})
				return err
			},
			message: `ClusterRole.rbac.authorization.k8s.io "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'`,
			details: invalid("ClusterRole", "rbac.authorization.k8s.io", "a/b", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: "a/b": may not contain '/'`, Field: "metadata.name"}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if !apierrors.IsInvalid(err) {
				t.Fatalf("error = %v, want Invalid", err)
			}
			checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid, message: tc.message, details: tc.details})
		})
	}
	// Nothing invalid was stored, and the existing Deployment kept its selector.
	d, err := deps.Get(ctx, "existing", metav1.GetOptions{})
	if err != nil || d.Spec.Selector.MatchLabels["app"] != "existing" {
		t.Errorf("existing: %v, selector %v", err, d.Spec.Selector)
	}
	list, err := deps.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("deployments: %v, %v; want only existing", err, listNames(t, list))
	}
}
