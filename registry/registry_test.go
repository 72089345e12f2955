package registry

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func kindOf(t testing.TB, resource string) *Kind {
	t.Helper()
	for _, k := range Builtin() {
		if k.Resource == resource {
			return k
		}
	}
	t.Fatalf("no kind %s", resource)
	return nil
}

const deploymentBody = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
 "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
 "spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`

func create(t *testing.T, k *Kind, body string) (*unstructured.Unstructured, error) {
	t.Helper()
	obj, _, err := k.Decode([]byte(body), FieldValidationStrict)
	if err != nil {
		return nil, err
	}
	prepared, err := k.PrepareCreate(k.Context(context.Background(), "default", "create", "", nil), obj, nil)
	if err != nil {
		return nil, err
	}
	return prepared.Unstructured, nil
}

func TestCreateDefaultsDeployment(t *testing.T) {
	u, err := create(t, kindOf(t, "deployments"), deploymentBody)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"spec.strategy.type":                               "RollingUpdate",
		"spec.strategy.rollingUpdate.maxSurge":             "25%",
		"spec.strategy.rollingUpdate.maxUnavailable":       "25%",
		"spec.revisionHistoryLimit":                        int64(10),
		"spec.progressDeadlineSeconds":                     int64(600),
		"spec.replicas":                                    int64(1),
		"metadata.generation":                              int64(1),
		"spec.template.spec.restartPolicy":                 "Always",
		"spec.template.spec.dnsPolicy":                     "ClusterFirst",
		"spec.template.spec.terminationGracePeriodSeconds": int64(30),
	} {
		got, found, err := unstructured.NestedFieldNoCopy(u.Object, strings.Split(path, ".")...)
		if err != nil || !found || got != want {
			t.Errorf("%s = %#v (found %v, %v), want %#v", path, got, found, err, want)
		}
	}
	if u.GetUID() == "" || u.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("system metadata not set: uid %q, creationTimestamp %v", u.GetUID(), u.GetCreationTimestamp())
	}
}

func TestCreateRejects(t *testing.T) {
	tests := []struct {
		name, resource, body string
		code                 int32
		causes               []string // field paths of the 422 causes
		message              string   // for non-422 answers
	}{
		{name: "invalid name", resource: "configmaps", code: 422, causes: []string{"metadata.name"},
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}`},
		{name: "negative replicas", resource: "deployments", code: 422, causes: []string{"spec.replicas"},
			body: strings.Replace(deploymentBody, `"spec":{"selector"`, `"spec":{"replicas":-1,"selector"`, 1)},
		{name: "selector does not match template", resource: "deployments", code: 422,
			causes: []string{"spec.template.metadata.labels"},
			body:   strings.Replace(deploymentBody, `"labels":{"app":"web"}`, `"labels":{"app":"other"}`, 1)},
		{name: "unknown field under Strict", resource: "configmaps", code: 400,
			message: `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spec"`,
			body:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"spec":{}}`},
		{name: "wrong apiVersion", resource: "deployments", code: 400,
			message: `Deployment in version "v2" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps/v2"`,
			body:    strings.Replace(deploymentBody, `"apps/v1"`, `"apps/v2"`, 1)},
		{name: "wrong kind", resource: "configmaps", code: 400,
			message: `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`,
			body:    `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`},
		{name: "namespace differs from the request's", resource: "configmaps", code: 400,
			message: "the namespace of the provided object does not match the namespace sent on the request",
			body:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"other"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := create(t, kindOf(t, tt.resource), tt.body)
			var status apierrors.APIStatus
			if err == nil || !asStatus(err, &status) {
				t.Fatalf("err = %v, want a %d status", err, tt.code)
			}
			st := status.Status()
			if st.Code != tt.code {
				t.Fatalf("code %d (%s), want %d", st.Code, st.Message, tt.code)
			}
			if tt.message != "" && st.Message != tt.message {
				t.Errorf("message %q, want %q", st.Message, tt.message)
			}
			if tt.causes != nil {
				var fields []string
				for _, c := range st.Details.Causes {
					fields = append(fields, c.Field)
				}
				if strings.Join(fields, ",") != strings.Join(tt.causes, ",") {
					t.Errorf("causes %v, want %v (%s)", fields, tt.causes, st.Message)
				}
			}
		})
	}
}

func asStatus(err error, out *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	*out = s
	return ok
}

func TestUpdateGenerationAndImmutableSelector(t *testing.T) {
	k := kindOf(t, "deployments")
	cur, err := create(t, k, deploymentBody)
	if err != nil {
		t.Fatal(err)
	}
	cur.SetResourceVersion("5")
	ctx := k.Context(context.Background(), "default", "update", "", nil)
	update := func(body string) (*unstructured.Unstructured, error) {
		obj, _, err := k.Decode([]byte(body), FieldValidationStrict)
		if err != nil {
			return nil, err
		}
		prepared, err := k.PrepareUpdate(ctx, obj, k.Current(cur), "", nil)
		if err != nil {
			return nil, err
		}
		return prepared.Unstructured, nil
	}
	labelled, err := update(strings.Replace(deploymentBody, `"namespace":"default"}`, `"namespace":"default","labels":{"x":"y"}}`, 1))
	if err != nil || labelled.GetGeneration() != 1 {
		t.Fatalf("label change: generation %d, err %v; want 1", labelled.GetGeneration(), err)
	}
	scaled, err := update(strings.Replace(deploymentBody, `"spec":{"selector"`, `"spec":{"replicas":3,"selector"`, 1))
	if err != nil || scaled.GetGeneration() != 2 {
		t.Fatalf("spec change: generation %d, err %v; want 2", scaled.GetGeneration(), err)
	}
	moved := strings.ReplaceAll(deploymentBody, `{"app":"web"}`, `{"app":"moved"}`)
	_, err = update(moved)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.selector: Invalid value") ||
		!strings.Contains(err.Error(), "field is immutable") {
		t.Fatalf("selector change: %v; want 422 spec.selector field is immutable", err)
	}
}

func TestTableColumns(t *testing.T) {
	tests := []struct {
		resource, body string
		columns        []string
	}{
		{"deployments", deploymentBody, []string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"}},
		{"configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`, []string{"Name", "Data", "Age"}},
		{"pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`,
			[]string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			k := kindOf(t, tt.resource)
			u, err := create(t, k, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			table, err := k.Table(context.Background(), []*unstructured.Unstructured{u}, true, &metav1.TableOptions{})
			if err != nil {
				t.Fatal(err)
			}
			names := columnNames(table)
			if strings.Join(names, ",") != strings.Join(tt.columns, ",") {
				t.Errorf("columns %v, want %v", names, tt.columns)
			}
			if len(table.Rows) != 1 || table.Rows[0].Cells[0] != u.GetName() {
				t.Errorf("rows %+v", table.Rows)
			}
			if p, ok := table.Rows[0].Object.Object.(*metav1.PartialObjectMetadata); !ok || p.Name != u.GetName() {
				t.Errorf("row object %#v, want PartialObjectMetadata", table.Rows[0].Object.Object)
			}
		})
	}
}

// TestTableDefaultColumns: a CRD is printed with kube-apiserver's default
// columns, Name and Created At, one row per object, single or listed.
func TestTableDefaultColumns(t *testing.T) {
	k := kindOf(t, "customresourcedefinitions")
	u, err := create(t, k, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"gadgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
 "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	created := u.GetCreationTimestamp().UTC().Format(time.RFC3339)
	for _, asList := range []bool{true, false} {
		table, err := k.Table(context.Background(), []*unstructured.Unstructured{u}, asList, &metav1.TableOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names := columnNames(table)
		if strings.Join(names, ",") != "Name,Created At" {
			t.Errorf("list %v: columns %v, want Name, Created At", asList, names)
		}
		if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 2 ||
			table.Rows[0].Cells[0] != "gadgets.example.com" || table.Rows[0].Cells[1] != created {
			t.Errorf("list %v: rows %+v, want gadgets.example.com created %s", asList, table.Rows, created)
		}
	}
}

func columnNames(table *metav1.Table) []string {
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}
