package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/yaml"
)

// applyStep is one write by one manager, through the HTTP API.
type applyStep struct {
	// by is the fieldManager parameter for apply, the User-Agent (whose
	// prefix names the manager) for the other writes.
	by string
	// op: apply, force (apply with force=true), dryrun (apply with
	// dryRun=All), merge, json, strategic (PATCH), scale (merge patch of
	// the scale subresource), put, status (PUT of the status subresource;
	// body is the status), noop (apply that must not write).
	op   string
	body string
	// code and message are the expected answer (200 when code is 0).
	code    int
	message string
}

// applyScenario is a history of writes to one object and what it leaves:
// selected fields of the object (YAML, compared field by field) and its
// managedFields without their times (YAML).
type applyScenario struct {
	name     string
	resource string // path of the collection
	object   string // name
	steps    []applyStep
	want     string
	managed  string
}

// deployment is an applied Deployment configuration with replicas and
// the container's image.
func deploymentConfig(replicas, image string, extra ...string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"` + strings.Join(extra, "") + `},"spec":{` + replicas +
		`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
		`"spec":{"containers":[{"name":"web","image":"` + image + `"}]}}}}`
}

const deployments = "/apis/apps/v1/namespaces/default/deployments"

// aliceDeploy is what alice owns after applying deploymentConfig(`"replicas":2,`, ...).
const aliceDeploy = `
- manager: alice
  operation: Apply
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:replicas: {}
      f:selector: {}
      f:template:
        f:metadata:
          f:labels:
            f:app: {}
        f:spec:
          f:containers:
            k:{"name":"web"}:
              .: {}
              f:image: {}
              f:name: {}`

// bobReplicas is bob's entry once he has applied .spec.replicas.
const bobReplicas = `
- manager: bob
  operation: Apply
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:replicas: {}`

func TestApplyScenarios(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	for _, sc := range applyScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ts.deleteNow(t, sc.resource+"/"+sc.object)
			var lastRV string
			for i, st := range sc.steps {
				code, body := ts.applyStep(t, sc.resource, sc.object, st)
				want := st.code
				if want == 0 {
					want = http.StatusOK
				}
				if code != want {
					t.Fatalf("step %d (%s by %s): %d %s, want %d", i, st.op, st.by, code, body, want)
				}
				if st.message != "" {
					var status struct{ Message string }
					_ = json.Unmarshal(body, &status)
					if status.Message != st.message {
						t.Fatalf("step %d: message\n%s\nwant\n%s", i, status.Message, st.message)
					}
				}
				if code < 300 {
					rv := jsonField(body, "metadata", "resourceVersion")
					if st.op == "noop" && rv != lastRV {
						t.Fatalf("step %d: a re-apply wrote: resourceVersion %s, was %s", i, rv, lastRV)
					}
					if st.op != "dryrun" {
						lastRV = rv
					}
				}
			}
			got := ts.getJSON(t, sc.resource+"/"+sc.object)
			assertSubset(t, got, sc.want)
			assertManaged(t, got, sc.managed)
		})
	}
}

var applyScenarios = []applyScenario{{
	name: "create by apply, no-op re-apply", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "alice", op: "noop", body: deploymentConfig(`"replicas":2,`, "nginx")},
	},
	want:    `{spec: {replicas: 2, template: {spec: {containers: [{name: web, image: nginx, imagePullPolicy: Always}]}}}}`,
	managed: aliceDeploy,
}, {
	name: "conflict, then force", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "bob", op: "apply", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`,
			code: http.StatusConflict, message: `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`},
		{by: "bob", op: "force", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}`},
	},
	want:    `{spec: {replicas: 3}}`,
	managed: strings.Replace(aliceDeploy, "      f:replicas: {}\n", "", 1) + bobReplicas,
}, {
	name: "co-ownership by applying the same value", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "bob", op: "apply", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2}}`},
		{by: "bob", op: "noop", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2}}`},
	},
	want:    `{spec: {replicas: 2}}`,
	managed: aliceDeploy + bobReplicas,
}, {
	name: "a field one manager stops applying is removed, one another owns stays", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx", `,"labels":{"a":"1","b":"2"}`), code: http.StatusCreated},
		{by: "bob", op: "apply", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"b":"2"}}}`},
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx")},
	},
	want: `{metadata: {labels: {b: "2"}}, spec: {replicas: 2}}`,
	managed: aliceDeploy + `
- manager: bob
  operation: Apply
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:metadata:
      f:labels:
        f:b: {}`,
}, {
	name: "updates by merge, JSON and strategic patch and PUT are tracked per manager", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "scaler/v1", op: "merge", body: `{"spec":{"replicas":4}}`},
		{by: "labeler", op: "json", body: `[{"op":"add","path":"/metadata/labels","value":{"team":"a"}}]`},
		{by: "kubectl-edit/v1.37.2 (linux/amd64)", op: "strategic", body: `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}`},
		{by: "annotator", op: "put", body: "annotate"},
	},
	want: `{metadata: {labels: {team: a}, annotations: {note: x}}, spec: {replicas: 4, template: {spec: {containers: [{name: web, image: "nginx:2"}]}}}}`,
	managed: `
- manager: alice
  operation: Apply
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:selector: {}
      f:template:
        f:metadata:
          f:labels:
            f:app: {}
        f:spec:
          f:containers:
            k:{"name":"web"}:
              .: {}
              f:name: {}
- manager: annotator
  operation: Update
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:metadata:
      f:annotations:
        .: {}
        f:note: {}
- manager: kubectl-edit
  operation: Update
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:template:
        f:spec:
          f:containers:
            k:{"name":"web"}:
              f:image: {}
- manager: labeler
  operation: Update
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:metadata:
      f:labels:
        .: {}
        f:team: {}
- manager: scaler
  operation: Update
  apiVersion: apps/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:replicas: {}`,
}, {
	name: "status subresource", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "controller", op: "status", body: `{"replicas":2,"readyReplicas":1}`},
	},
	want: `{status: {replicas: 2, readyReplicas: 1}}`,
	managed: aliceDeploy + `
- manager: controller
  operation: Update
  apiVersion: apps/v1
  subresource: status
  fieldsType: FieldsV1
  fieldsV1:
    f:status:
      f:readyReplicas: {}
      f:replicas: {}`,
}, {
	name: "scale subresource takes the replicas", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "kubectl-scale/v1.37.2", op: "scale", body: `{"spec":{"replicas":5}}`},
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusConflict,
			message: `Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using apps/v1: .spec.replicas`},
	},
	want: `{spec: {replicas: 5}}`,
	managed: strings.Replace(aliceDeploy, "      f:replicas: {}\n", "", 1) + `
- manager: kubectl-scale
  operation: Update
  apiVersion: apps/v1
  subresource: scale
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:replicas: {}`,
}, {
	name: "dry run creates and changes nothing", resource: deployments, object: "web",
	steps: []applyStep{
		{by: "alice", op: "apply", body: deploymentConfig(`"replicas":2,`, "nginx"), code: http.StatusCreated},
		{by: "bob", op: "dryrun", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":9}}`,
			code: http.StatusConflict, message: `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`},
		{by: "alice", op: "dryrun", body: deploymentConfig(`"replicas":9,`, "nginx")},
	},
	want:    `{spec: {replicas: 2}}`,
	managed: aliceDeploy,
}, {
	name: "custom resource: a list keyed by two fields", resource: "/apis/example.com/v1/namespaces/default/widgets", object: "gizmo",
	steps: []applyStep{
		{by: "alice", op: "apply", code: http.StatusCreated, body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gizmo"},` +
			`"spec":{"size":2,"ports":[{"port":53,"protocol":"TCP","name":"dns"},{"port":53,"protocol":"UDP","name":"dns-udp"}]}}`},
		{by: "bob", op: "apply", body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gizmo"},` +
			`"spec":{"ports":[{"port":53,"protocol":"TCP","name":"domain"}]}}`,
			code: http.StatusConflict, message: `Apply failed with 1 conflict: conflict with "alice": .spec.ports[port=53,protocol="TCP"].name`},
		{by: "bob", op: "apply", body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gizmo"},` +
			`"spec":{"ports":[{"port":80,"protocol":"TCP","name":"http"}]}}`},
	},
	want: `{spec: {size: 2, color: red, ports: [{port: 53, protocol: TCP, name: dns}, {port: 53, protocol: UDP, name: dns-udp}, {port: 80, protocol: TCP, name: http}]}}`,
	managed: `
- manager: alice
  operation: Apply
  apiVersion: example.com/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:ports:
        k:{"port":53,"protocol":"TCP"}:
          .: {}
          f:name: {}
          f:port: {}
          f:protocol: {}
        k:{"port":53,"protocol":"UDP"}:
          .: {}
          f:name: {}
          f:port: {}
          f:protocol: {}
      f:size: {}
- manager: bob
  operation: Apply
  apiVersion: example.com/v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:ports:
        k:{"port":80,"protocol":"TCP"}:
          .: {}
          f:name: {}
          f:port: {}
          f:protocol: {}`,
}}

// applyStep sends one step and returns the status code and body. Each
// scenario starts from a deleted object.
func (ts *testServer) applyStep(t *testing.T, resource, name string, st applyStep) (int, []byte) {
	t.Helper()
	path, method, ctype := resource+"/"+name, http.MethodPatch, "application/apply-patch+yaml"
	query := "?fieldManager=" + st.by
	body := st.body
	switch st.op {
	case "force":
		query += "&force=true"
	case "dryrun":
		query += "&dryRun=All"
	case "merge":
		ctype, query = "application/merge-patch+json", ""
	case "json":
		ctype, query = "application/json-patch+json", ""
	case "strategic":
		ctype, query = "application/strategic-merge-patch+json", ""
	case "scale":
		path, ctype, query = path+"/scale", "application/merge-patch+json", ""
	case "put", "status":
		cur := ts.getJSON(t, path)
		delete(cur["metadata"].(map[string]any), "managedFields")
		if st.op == "status" {
			path += "/status"
			var status map[string]any
			if err := json.Unmarshal([]byte(body), &status); err != nil {
				t.Fatal(err)
			}
			cur["status"] = status
		} else {
			cur["metadata"].(map[string]any)["annotations"] = map[string]any{"note": "x"}
		}
		data, _ := json.Marshal(cur)
		body, method, ctype, query = string(data), http.MethodPut, "application/json", ""
	}
	return ts.send(t, method, path+query, ctype, []byte(body), "User-Agent", st.by)
}

// send makes one request with a body and headers (name, value pairs) and
// returns the status code and the answer.
func (ts *testServer) send(t *testing.T, method, path, contentType string, body []byte, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func (ts *testServer) getJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	resp, err := http.Get(ts.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// deleteNow deletes an object if it exists.
func (ts *testServer) deleteNow(t *testing.T, path string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, ts.http.URL+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("DELETE %s: %d", path, resp.StatusCode)
	}
}

func jsonField(body []byte, path ...string) string {
	var v any
	_ = json.Unmarshal(body, &v)
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

// assertSubset checks that every field of want (YAML) has its value in
// got; lists are compared whole, element by element as subsets.
func assertSubset(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w any
	if err := yaml.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if path, ok := subset(got, w, ""); !ok {
		data, _ := yaml.Marshal(got)
		t.Fatalf("at %s, the object differs from %s:\n%s", path, want, data)
	}
}

func subset(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, v := range w {
			if p, ok := subset(g[k], v, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := subset(g[i], w[i], path+"[]"); !ok {
				return p, false
			}
		}
		return "", true
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	return path, bytes.Equal(gj, wj)
}

// assertManaged compares managedFields, without their times, with want
// (YAML). Entries are compared in the order kube-apiserver sorts those of
// one second: by operation, manager, subresource (time comes before
// manager, so a scenario that crosses a second would order them
// differently).
func assertManaged(t *testing.T, got map[string]any, want string) {
	t.Helper()
	entries := managedWithoutTime(got)
	var w []any
	if err := yaml.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, entries); diff != "" {
		data, _ := yaml.Marshal(entries)
		t.Fatalf("managedFields (-want +got):\n%s\ngot:\n%s", diff, data)
	}
}

// TestApplyTypedClient applies with client-go's typed Apply and apply
// configurations, as current controllers do: create, a conflicting apply
// by another manager, the same forced, and extraction of what a manager
// owns (ExtractDeployment reads managedFields).
func TestApplyTypedClient(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	deployments := ts.client.AppsV1().Deployments("default")
	labels := map[string]string{"app": "typed"}
	config := appsv1ac.Deployment("typed", "default").WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(2).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("app").WithImage("nginx")))))
	created, err := deployments.Apply(ctx, config, metav1.ApplyOptions{FieldManager: "controller"})
	if err != nil {
		t.Fatal(err)
	}
	if *created.Spec.Replicas != 2 || created.Generation != 1 || len(created.ManagedFields) != 1 {
		t.Fatalf("created: replicas %d, generation %d, managedFields %v", *created.Spec.Replicas, created.Generation, created.ManagedFields)
	}
	scale := appsv1ac.Deployment("typed", "default").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
	_, err = deployments.Apply(ctx, scale, metav1.ApplyOptions{FieldManager: "autoscaler"})
	if !apierrors.IsConflict(err) || err.Error() != `Apply failed with 1 conflict: conflict with "controller": .spec.replicas` {
		t.Fatalf("want the conflict on .spec.replicas, got %v", err)
	}
	forced, err := deployments.Apply(ctx, scale, metav1.ApplyOptions{FieldManager: "autoscaler", Force: true})
	if err != nil || *forced.Spec.Replicas != 5 || forced.Generation != 2 {
		t.Fatalf("forced: %v, %+v", err, forced)
	}
	owned, err := appsv1ac.ExtractDeployment(forced, "controller")
	if err != nil {
		t.Fatal(err)
	}
	if owned.Spec.Replicas != nil || *owned.Spec.Template.Spec.Containers[0].Image != "nginx" {
		t.Fatalf("controller still owns replicas or lost the image: %+v", owned.Spec)
	}
}

// TestApplyCRD applies a CRD server-side, the usual way around the size
// limit of client-side apply's annotation, and then a custom resource of
// it.
func TestApplyCRD(t *testing.T) {
	ts := newTestServer(t)
	crd, err := os.ReadFile("../examples/widgets-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com?fieldManager=kubectl"
	if code, body := ts.send(t, http.MethodPatch, path, "application/apply-patch+yaml", crd); code != http.StatusCreated {
		t.Fatalf("applying the CRD: %d %s", code, body)
	}
	widget, err := os.ReadFile("../examples/widget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var name string
	eventually(t, 5*time.Second, func() string {
		code, body := ts.send(t, http.MethodPatch, "/apis/example.com/v1/namespaces/default/widgets/gizmo?fieldManager=kubectl",
			"application/apply-patch+yaml", widget)
		if code != http.StatusCreated {
			return fmt.Sprintf("applying the widget: %d %s", code, body)
		}
		name = jsonField(body, "metadata", "name")
		return ""
	})
	if name != "gizmo" {
		t.Fatalf("created %q", name)
	}
}

// TestManagedFieldsCapped: past ten managers of updates, the oldest are
// merged into one "ancient-changes" entry, as kube-apiserver bounds them.
func TestManagedFieldsCapped(t *testing.T) {
	ts := newTestServer(t)
	cm := cmPath + "/capped"
	if code, body := ts.send(t, http.MethodPost, cmPath, "application/json",
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"capped"},"data":{"init":"x"}}`), "User-Agent", "creator"); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	for i := range 12 {
		patch := fmt.Appendf(nil, `{"data":{"k%d":"v"}}`, i)
		if code, body := ts.send(t, http.MethodPatch, cm+fmt.Sprintf("?fieldManager=m%02d", i), "application/merge-patch+json", patch); code != http.StatusOK {
			t.Fatalf("patch %d: %d %s", i, code, body)
		}
	}
	var managers []string
	entries, _ := ts.getJSON(t, cm)["metadata"].(map[string]any)["managedFields"].([]any)
	for _, e := range entries {
		managers = append(managers, e.(map[string]any)["manager"].(string))
	}
	slices.Sort(managers)
	want := []string{"ancient-changes", "m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10", "m11"}
	if !slices.Equal(managers, want) {
		t.Fatalf("managers %v, want %v", managers, want)
	}
}
