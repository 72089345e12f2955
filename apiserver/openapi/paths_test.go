package openapi

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestOperations checks operations the way kube-apiserver documents them:
// operation ID, x-kubernetes-action and x-kubernetes-group-version-kind.
func TestOperations(t *testing.T) {
	dc, _ := testServer(t, testService(t))
	docs := map[string]*spec3.OpenAPI{}
	tests := []struct {
		doc, method, path string
		id, action, gvk   string // gvk as group/version/kind; "" for none; id "" for no operation
	}{
		{"apis/apps/v1", "GET", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "readAppsV1NamespacedDeployment", "get", "apps/v1/Deployment"},
		{"apis/apps/v1", "GET", "/apis/apps/v1/namespaces/{namespace}/deployments", "listAppsV1NamespacedDeployment", "list", "apps/v1/Deployment"},
		{"apis/apps/v1", "GET", "/apis/apps/v1/deployments", "listAppsV1DeploymentForAllNamespaces", "list", "apps/v1/Deployment"},
		{"apis/apps/v1", "POST", "/apis/apps/v1/namespaces/{namespace}/deployments", "createAppsV1NamespacedDeployment", "post", "apps/v1/Deployment"},
		{"apis/apps/v1", "PUT", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "replaceAppsV1NamespacedDeployment", "put", "apps/v1/Deployment"},
		{"apis/apps/v1", "PATCH", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "patchAppsV1NamespacedDeployment", "patch", "apps/v1/Deployment"},
		{"apis/apps/v1", "DELETE", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "deleteAppsV1NamespacedDeployment", "delete", "apps/v1/Deployment"},
		{"apis/apps/v1", "DELETE", "/apis/apps/v1/namespaces/{namespace}/deployments", "deleteAppsV1CollectionNamespacedDeployment", "deletecollection", "apps/v1/Deployment"},
		{"apis/apps/v1", "GET", "/apis/apps/v1/watch/namespaces/{namespace}/deployments", "watchAppsV1NamespacedDeploymentList", "watchlist", "apps/v1/Deployment"},
		{"apis/apps/v1", "GET", "/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}", "watchAppsV1NamespacedDeployment", "watch", "apps/v1/Deployment"},
		{"apis/apps/v1", "PATCH", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status", "patchAppsV1NamespacedDeploymentStatus", "patch", "apps/v1/Deployment"},
		{"apis/apps/v1", "PUT", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "replaceAppsV1NamespacedDeploymentScale", "put", "autoscaling/v1/Scale"},
		{"apis/apps/v1", "POST", "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status", "", "", ""},
		{"apis/apps/v1", "GET", "/apis/apps/v1/", "getAppsV1APIResources", "", ""},
		{"apis/apps", "GET", "/apis/apps/", "getAppsAPIGroup", "", ""},
		{"apis", "GET", "/apis/", "getAPIVersions", "", ""},
		{"api", "GET", "/api/", "getCoreAPIVersions", "", ""},
		{"api/v1", "GET", "/api/v1/namespaces/{namespace}/pods", "listCoreV1NamespacedPod", "list", "/v1/Pod"},
		{"api/v1", "DELETE", "/api/v1/namespaces/{namespace}/configmaps/{name}", "deleteCoreV1NamespacedConfigMap", "delete", "/v1/ConfigMap"},
		{"api/v1", "GET", "/api/v1/namespaces/{name}", "readCoreV1Namespace", "get", "/v1/Namespace"},
		{"api/v1", "PUT", "/api/v1/namespaces/{name}/status", "replaceCoreV1NamespaceStatus", "put", "/v1/Namespace"},
		{"api/v1", "DELETE", "/api/v1/namespaces", "", "", ""}, // no deletecollection verb
		{"apis/batch/v1", "PATCH", "/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status", "patchBatchV1NamespacedJobStatus", "patch", "batch/v1/Job"},
		{"apis/rbac.authorization.k8s.io/v1", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles", "createRbacAuthorizationV1NamespacedRole", "post", "rbac.authorization.k8s.io/v1/Role"},
		{"apis/rbac.authorization.k8s.io/v1", "GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}/status", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			if docs[tt.doc] == nil {
				docs[tt.doc] = v3Doc(t, dc, tt.doc)
			}
			op := operation(docs[tt.doc], tt.path, tt.method)
			if tt.id == "" {
				if op != nil {
					t.Fatalf("unexpected operation %s", op.OperationId)
				}
				return
			}
			if op == nil {
				t.Fatalf("no operation")
			}
			if op.OperationId != tt.id {
				t.Errorf("operationId = %s, want %s", op.OperationId, tt.id)
			}
			if got, _ := op.Extensions["x-kubernetes-action"].(string); got != tt.action {
				t.Errorf("x-kubernetes-action = %q, want %q", got, tt.action)
			}
			if got := gvkString(op.Extensions[gvkExtensionKey]); got != tt.gvk {
				t.Errorf("%s = %q, want %q", gvkExtensionKey, got, tt.gvk)
			}
		})
	}
}

func gvkString(ext interface{}) string {
	m, ok := ext.(map[string]interface{})
	if !ok {
		return ""
	}
	return fmt.Sprintf("%v/%v/%v", m["group"], m["version"], m["kind"])
}

// TestWriteOperations checks what kubectl relies on in write operations: the
// query parameters of create, update and patch, and the patch media types.
// ("pretty", common to every operation of a path, is moved to the path by
// the builders, as in kube-apiserver's documents; kubectl's verifier looks
// for fieldValidation on the operation itself.)
func TestWriteOperations(t *testing.T) {
	dc, _ := testServer(t, testService(t))
	doc := v3Doc(t, dc, "apis/apps/v1")
	item := "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
	tests := []struct {
		method, path string
		params       []string
		consumes     []string
	}{
		{"POST", "/apis/apps/v1/namespaces/{namespace}/deployments", []string{"dryRun", "fieldManager", "fieldValidation"}, []string{"*/*"}},
		{"PUT", item, []string{"dryRun", "fieldManager", "fieldValidation"}, []string{"*/*"}},
		{"PATCH", item, []string{"dryRun", "fieldManager", "fieldValidation", "force"},
			[]string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}},
		{"PATCH", item + "/scale", []string{"dryRun", "fieldManager", "fieldValidation", "force"}, nil},
		{"DELETE", item, []string{"dryRun", "gracePeriodSeconds", "propagationPolicy"}, nil},
		{"GET", "/apis/apps/v1/namespaces/{namespace}/deployments", []string{"continue", "labelSelector", "limit", "resourceVersion", "watch"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			op := operation(doc, tt.path, tt.method)
			if op == nil {
				t.Fatalf("no operation")
			}
			var query []string
			for _, p := range op.Parameters {
				if p.In == "query" {
					query = append(query, p.Name)
				}
			}
			for _, want := range tt.params {
				if !slices.Contains(query, want) {
					t.Errorf("query parameters %v lack %s", query, want)
				}
			}
			if tt.consumes == nil {
				return
			}
			if op.RequestBody == nil {
				t.Fatalf("no request body")
			}
			got := slices.Sorted(func(yield func(string) bool) {
				for mt := range op.RequestBody.Content {
					if !yield(mt) {
						return
					}
				}
			})
			// CBOR apply joins in when the CBORServingAndStorage gate is on.
			got = slices.DeleteFunc(got, func(mt string) bool { return mt == "application/apply-patch+cbor" })
			if !slices.Equal(got, tt.consumes) {
				t.Errorf("request body media types = %v, want %v", got, tt.consumes)
			}
		})
	}
}

// TestGoldenOperations compares every v2 operation with
// testdata/operations.golden; run with -update after an intended change.
func TestGoldenOperations(t *testing.T) {
	dc, _ := testServer(t, testService(t))
	sw := v2Doc(t, dc)
	var lines []string
	for path, item := range sw.Paths.Paths {
		for _, m := range []struct {
			method string
			op     *spec.Operation
		}{{"GET", item.Get}, {"POST", item.Post}, {"PUT", item.Put}, {"PATCH", item.Patch}, {"DELETE", item.Delete}} {
			if m.op == nil {
				continue
			}
			action, _ := m.op.Extensions["x-kubernetes-action"].(string)
			lines = append(lines, strings.TrimRight(fmt.Sprintf("%-6s %s %s %s %s",
				m.method, path, m.op.ID, action, gvkString(m.op.Extensions[gvkExtensionKey])), " "))
		}
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "operations.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("operations differ from %s (run with -update to accept):\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
