package apiserver

// Bad input over raw HTTP: malformed, mistyped, oversized and hostile
// requests get kube-apiserver's 4xx answers as Status objects, never a 5xx
// or a dropped connection. FuzzCreateBody drives the create path with
// arbitrary bodies.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	cmPath  = "/api/v1/namespaces/default/configmaps"
	depPath = "/apis/apps/v1/namespaces/default/deployments"
)

var (
	jsonCT  = map[string]string{"Content-Type": "application/json"}
	mergeCT = map[string]string{"Content-Type": "application/merge-patch+json"}
	smpCT   = map[string]string{"Content-Type": "application/strategic-merge-patch+json"}
	jsonPCT = map[string]string{"Content-Type": "application/json-patch+json"}

	// unsupportedPatchType is the 415 go-restful's router answers in
	// kube-apiserver to a PATCH of a built-in resource whose
	// Content-Type the route does not consume: its own words, empty
	// details.
	unsupportedPatchType = &statusWant{code: 415, reason: metav1.StatusReasonUnsupportedMediaType,
		message: "415: Unsupported Media Type", details: &metav1.StatusDetails{}}
)

// deploymentBody is a valid Deployment whose spec may carry extra fields.
func deploymentBody(name, extraSpec string) string {
	return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q},"spec":{%s"selector":{"matchLabels":{"app":"x"}},`+
		`"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`, name, extraSpec)
}

func nested(open, close string, depth int) string {
	return strings.Repeat(open, depth) + strings.Repeat(close, depth)
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "x", map[string]string{"a": "1"}, nil)
	if _, err := ts.client.AppsV1().Deployments("default").Create(ctx, newDeployment("web", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := func(msg string) *statusWant {
		return &statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: msg}
	}
	badPrefix := func(prefix string) *statusWant {
		return &statusWant{code: 400, reason: metav1.StatusReasonBadRequest, prefix: prefix}
	}
	notFoundPath := &statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: "the server could not find the requested resource"}
	invalidOptions := func(kind, msg string) *statusWant {
		return &statusWant{code: 422, reason: metav1.StatusReasonInvalid, message: msg}
	}
	oversized := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"` +
		strings.Repeat("x", DefaultMaxRequestBodyBytes) + `"}}`
	unknownField := deploymentBody("unknown", `"foo":1,`)

	tests := []struct {
		name   string
		method string
		path   string
		header map[string]string
		body   string
		code   int
		status *statusWant // the Status of an error answer
		// warnings are the expected Warning headers (nil: not checked).
		warnings []string
		// check looks at a successful answer.
		check func(t *testing.T, obj map[string]any)
	}{
		// Bodies that are not objects of the kind.
		{name: "malformed JSON", method: "POST", path: cmPath, header: jsonCT, body: `{"apiVersion":`, code: 400,
			status: bad(`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":)`)},
		{name: "not JSON", method: "POST", path: cmPath, header: jsonCT, body: `hello`, code: 400,
			status: bad(`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'h' looking for beginning of value (68656c6c6f)`)},
		{name: "empty body", method: "POST", path: cmPath, header: jsonCT, body: ``, code: 400,
			status: bad(`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`)},
		{name: "binary garbage", method: "POST", path: cmPath, header: jsonCT, body: "\x00\xff\xfe{", code: 400,
			status: badPrefix(`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: `)},
		{name: "wrong kind", method: "POST", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, code: 400,
			status: badPrefix(`Secret in version "v1" cannot be handled as a ConfigMap: `)},
		{name: "wrong apiVersion", method: "POST", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"s"}}`, code: 400,
			status: badPrefix(`ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1"`)},
		{name: "deployment in the core group", method: "POST", path: depPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"Deployment","metadata":{"name":"s"}}`, code: 400,
			status: badPrefix(`Deployment in version "v1" cannot be handled as a Deployment: no kind "Deployment" is registered for version "v1"`)},
		{name: "wrong field type", method: "POST", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"a":1}}`, code: 400,
			status: badPrefix(`ConfigMap in version "v1" cannot be handled as a ConfigMap: `)},
		{name: "metadata is a string", method: "POST", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":"s"}`, code: 400,
			status: badPrefix(`ConfigMap in version "v1" cannot be handled as a ConfigMap: `)},
		{name: "invalid YAML", method: "POST", path: cmPath, header: map[string]string{"Content-Type": "application/yaml"},
			body: "apiVersion: v1\nkind: [ConfigMap\n", code: 400, status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "garbage protobuf", method: "POST", path: cmPath, header: map[string]string{"Content-Type": "application/vnd.kubernetes.protobuf"},
			body: "k8s\x00\x0a\x0bgarbage", code: 400, status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "empty object: kind and apiVersion from the URL, then validation", method: "POST", path: cmPath, header: jsonCT,
			body: `{}`, code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid,
				message: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`}},
		{name: "no kind and apiVersion", method: "POST", path: cmPath, header: jsonCT,
			body: `{"metadata":{"name":"nokind"}}`, code: 201},
		{name: "namespace differs from the URL", method: "POST", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ns","namespace":"kube-system"}}`, code: 400,
			status: bad("the namespace of the provided object does not match the namespace sent on the request")},
		{name: "namespace differs from the URL on update", method: "PUT", path: cmPath + "/x", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"kube-system"}}`, code: 400,
			status: bad("the namespace of the provided object does not match the namespace sent on the request")},
		{name: "namespace on a cluster-scoped object is dropped", method: "POST", path: "/apis/rbac.authorization.k8s.io/v1/clusterroles", header: jsonCT,
			body: `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"cr","namespace":"default"}}`, code: 201,
			check: func(t *testing.T, obj map[string]any) {
				if md, _ := obj["metadata"].(map[string]any); md["namespace"] != nil {
					t.Errorf("metadata.namespace = %v, want none", md["namespace"])
				}
			}},
		{name: "name differs from the URL", method: "PUT", path: cmPath + "/x", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`, code: 400,
			status: bad("the name of the object (other) does not match the name on the URL (x)")},

		// Paths and methods the server does not serve.
		{name: "unknown resource", method: "GET", path: "/api/v1/namespaces/default/foos", code: 404, status: notFoundPath},
		{name: "unknown group", method: "GET", path: "/apis/nope.example.com/v1/namespaces/default/foos", code: 404,
			status: &statusWant{code: 404, reason: metav1.StatusReasonNotFound}},
		{name: "unknown version", method: "GET", path: "/apis/apps/v2/namespaces/default/deployments", code: 404,
			status: &statusWant{code: 404, reason: metav1.StatusReasonNotFound}},
		{name: "unknown subresource", method: "GET", path: cmPath + "/x/status", code: 404, status: notFoundPath},
		{name: "cluster-scoped kind under a namespace", method: "GET", path: "/apis/rbac.authorization.k8s.io/v1/namespaces/default/clusterroles",
			code: 404, status: notFoundPath},
		{name: "POST to all namespaces", method: "POST", path: "/api/v1/configmaps", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y","namespace":"default"}}`, code: 405,
			status: &statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed, message: "the server does not allow this method on the requested resource"}},
		{name: "POST to an object", method: "POST", path: cmPath + "/y", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}`, code: 405,
			status: &statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed, message: "the server does not allow this method on the requested resource"}},
		{name: "PUT to a collection", method: "PUT", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}`, code: 405,
			status: &statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed, message: "the server does not allow this method on the requested resource"}},
		{name: "PUT of a missing object", method: "PUT", path: cmPath + "/nope", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nope"}}`, code: 404,
			status: &statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "nope" not found`}},
		{name: "PATCH of a missing object", method: "PATCH", path: cmPath + "/nope", header: mergeCT, body: `{"data":{"a":"2"}}`, code: 404,
			status: &statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "nope" not found`}},

		// Size and depth.
		{name: "oversized body", method: "POST", path: cmPath, header: jsonCT, body: oversized, code: 413,
			status: &statusWant{code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, message: "Request entity too large: limit is 3145728"}},
		{name: "oversized patch", method: "PATCH", path: cmPath + "/x", header: mergeCT, body: oversized, code: 413,
			status: &statusWant{code: 413, reason: metav1.StatusReasonRequestEntityTooLarge, message: "Request entity too large: limit is 3145728"}},
		{name: "deeply nested JSON", method: "POST", path: cmPath, header: jsonCT, body: nested("[", "]", 20000), code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "deeply nested JSON object", method: "POST", path: cmPath, header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000) + `}`,
			code: 400, status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "deeply nested YAML", method: "POST", path: cmPath, header: map[string]string{"Content-Type": "application/yaml"},
			body: nested("[", "]", 20000), code: 400, status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "deeply nested patch", method: "PATCH", path: cmPath + "/x", header: mergeCT,
			body: `{"data":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000) + `}`,
			code: 400, status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},

		// Query parameters.
		// kube-apiserver's words; its get and watch answer them with 500.
		{name: "non-integer resourceVersion on get", method: "GET", path: cmPath + "/x?resourceVersion=abc", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`}},
		{name: "non-integer resourceVersion on list", method: "GET", path: cmPath + "?resourceVersion=abc", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`}},
		{name: "non-integer resourceVersion on watch", method: "GET", path: cmPath + "?watch=true&resourceVersion=abc", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`}},
		{name: "negative resourceVersion on list", method: "GET", path: cmPath + "?resourceVersion=-1", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: `invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax`}},
		{name: "unsupported resourceVersionMatch on list", method: "GET", path: cmPath + "?resourceVersion=1&resourceVersionMatch=Bogus", code: 422,
			status: invalidOptions("ListOptions", `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`)},
		{name: "unsupported resourceVersionMatch on watch", method: "GET",
			path: cmPath + "?watch=true&resourceVersionMatch=Bogus&sendInitialEvents=true&allowWatchBookmarks=true", code: 422,
			status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "resourceVersionMatch on a watch without sendInitialEvents", method: "GET",
			path: cmPath + "?watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan", code: 422,
			status: invalidOptions("ListOptions", `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`)},
		{name: "non-integer limit", method: "GET", path: cmPath + "?limit=abc", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "non-integer timeoutSeconds", method: "GET", path: cmPath + "?watch=true&timeoutSeconds=abc", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "malformed labelSelector", method: "GET", path: cmPath + "?labelSelector=a+in+(", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "malformed fieldSelector", method: "GET", path: cmPath + "?fieldSelector=%3D%3D%3D", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},

		// fieldValidation.
		{name: "unknown field, Strict", method: "POST", path: depPath + "?fieldValidation=Strict", header: jsonCT, body: unknownField, code: 400,
			status: bad(`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"`)},
		{name: "unknown field, Warn", method: "POST", path: depPath + "?fieldValidation=Warn", header: jsonCT,
			body: deploymentBody("warned", `"foo":1,`), code: 201, warnings: []string{`299 - "unknown field \"spec.foo\""`}},
		{name: "unknown field, default (Warn)", method: "POST", path: depPath, header: jsonCT,
			body: deploymentBody("defaulted", `"foo":1,`), code: 201, warnings: []string{`299 - "unknown field \"spec.foo\""`}},
		{name: "unknown field, Ignore", method: "POST", path: depPath + "?fieldValidation=Ignore", header: jsonCT,
			body: deploymentBody("ignored", `"foo":1,`), code: 201, warnings: []string{}},
		{name: "duplicate field, Strict", method: "POST", path: cmPath + "?fieldValidation=Strict", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{},"data":{}}`, code: 400,
			status: bad(`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data"`)},
		{name: "unknown field in an update, Strict", method: "PUT", path: depPath + "/web?fieldValidation=Strict", header: jsonCT,
			body: deploymentBody("web", `"foo":1,`), code: 400,
			status: badPrefix(`Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"`)},
		{name: "unknown field in a merge patch, Strict", method: "PATCH", path: cmPath + "/x?fieldValidation=Strict", header: mergeCT,
			body: `{"spec":{"foo":1}}`, code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "fieldValidation=Bogus on create", method: "POST", path: cmPath + "?fieldValidation=Bogus", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bogus"}}`, code: 422,
			status: invalidOptions("CreateOptions", `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`)},
		{name: "fieldValidation=Bogus on update", method: "PUT", path: cmPath + "/x?fieldValidation=Bogus", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`, code: 422,
			status: invalidOptions("UpdateOptions", `UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`)},
		{name: "fieldValidation=Bogus on patch", method: "PATCH", path: cmPath + "/x?fieldValidation=Bogus", header: mergeCT,
			body: `{"data":{"a":"2"}}`, code: 422,
			status: invalidOptions("PatchOptions", `PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`)},
		{name: "dryRun=Bogus on create", method: "POST", path: cmPath + "?dryRun=Bogus", header: jsonCT,
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bogus"}}`, code: 422,
			status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid, prefix: `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: `}},

		// Patches.
		{name: "strategic patch: $setElementOrder missing a patch item", method: "PATCH", path: depPath + "/web", header: smpCT,
			body: `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"name":"side","image":"busybox"}]}}}}`,
			code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "strategic patch: $setElementOrder against the patch order", method: "PATCH", path: depPath + "/web", header: smpCT,
			body: `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"b","image":"x"},{"name":"a","image":"y"}]}}}}`,
			code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "strategic patch: $patch bogus", method: "PATCH", path: depPath + "/web", header: smpCT,
			body: `{"spec":{"template":{"spec":{"containers":[{"name":"web","$patch":"bogus"}]}}}}`,
			code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "strategic patch: element without its merge key", method: "PATCH", path: depPath + "/web", header: smpCT,
			body: `{"spec":{"template":{"spec":{"containers":[{"image":"nginx:2"}]}}}}`,
			code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "strategic patch: a JSON array", method: "PATCH", path: cmPath + "/x", header: smpCT, body: `[{"data":{}}]`, code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "strategic patch: malformed JSON", method: "PATCH", path: cmPath + "/x", header: smpCT, body: `{"data":`, code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "strategic patch: produces an invalid object", method: "PATCH", path: depPath + "/web", header: smpCT,
			body: `{"spec":{"replicas":-1}}`, code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid,
				message: `Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`}},
		{name: "strategic patch: wrong type", method: "PATCH", path: depPath + "/web", header: smpCT,
			body: `{"spec":{"replicas":"many"}}`, code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "JSON patch: failing test", method: "PATCH", path: cmPath + "/x", header: jsonPCT,
			body: `[{"op":"test","path":"/data/a","value":"2"},{"op":"replace","path":"/data/a","value":"3"}]`, code: 422,
			status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "JSON patch: removing a missing path", method: "PATCH", path: cmPath + "/x", header: jsonPCT,
			body: `[{"op":"remove","path":"/data/nope"}]`, code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "JSON patch: not an array", method: "PATCH", path: cmPath + "/x", header: jsonPCT, body: `{"op":"add"}`, code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "JSON patch: unknown op", method: "PATCH", path: cmPath + "/x", header: jsonPCT, body: `[{"op":"frobnicate","path":"/data"}]`,
			code: 422, status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "JSON patch: changes the name", method: "PATCH", path: cmPath + "/x", header: jsonPCT,
			body: `[{"op":"replace","path":"/metadata/name","value":"y"}]`, code: 400,
			status: bad("the name of the object (y) does not match the name on the URL (x)")},
		{name: "merge patch: a JSON array", method: "PATCH", path: cmPath + "/x", header: mergeCT, body: `[{"data":{}}]`, code: 400,
			status: badPrefix("error decoding patch: ")},
		{name: "merge patch: a string", method: "PATCH", path: cmPath + "/x", header: mergeCT, body: `"data"`, code: 400,
			status: badPrefix("error decoding patch: ")},
		{name: "merge patch: malformed JSON", method: "PATCH", path: cmPath + "/x", header: mergeCT, body: `{"data":`, code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "merge patch: kind changed", method: "PATCH", path: cmPath + "/x", header: mergeCT, body: `{"kind":"Secret"}`, code: 422,
			status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid}},
		{name: "JSON patch: changes the namespace", method: "PATCH", path: cmPath + "/x", header: jsonPCT,
			body: `[{"op":"add","path":"/metadata/namespace","value":"kube-system"}]`, code: 400,
			status: bad("the namespace of the provided object does not match the namespace sent on the request")},

		// Media types.
		{name: "server-side apply without fieldManager", method: "PATCH", path: cmPath + "/x", header: map[string]string{"Content-Type": "application/apply-patch+yaml"},
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", code: 422,
			status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid,
				message: `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`}},
		{name: "server-side apply of YAML that is not", method: "PATCH", path: cmPath + "/x?fieldManager=m",
			header: map[string]string{"Content-Type": "application/apply-patch+yaml"}, body: "a: [", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: "error decoding patch: error converting YAML to JSON: yaml: line 1: did not find expected node content"}},
		{name: "server-side apply of another kind", method: "PATCH", path: cmPath + "/x?fieldManager=m",
			header: map[string]string{"Content-Type": "application/apply-patch+yaml"}, body: "apiVersion: v1\nkind: Secret\n", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: "invalid object type: /v1, Kind=Secret"}},
		{name: "server-side apply of an undeclared field", method: "PATCH", path: cmPath + "/x?fieldManager=m",
			header: map[string]string{"Content-Type": "application/apply-patch+yaml"}, body: "apiVersion: v1\nkind: ConfigMap\nspec: {}\n", code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: "failed to create typed patch object (/; /v1, Kind=ConfigMap): .spec: field not declared in schema"}},
		{name: "server-side apply as CBOR", method: "PATCH", path: cmPath + "/x?fieldManager=m",
			header: map[string]string{"Content-Type": "application/apply-patch+cbor"}, body: "\xa0", code: 415,
			status: unsupportedPatchType},
		{name: "patch as text/plain", method: "PATCH", path: cmPath + "/x", header: map[string]string{"Content-Type": "text/plain"},
			body: `{"data":{}}`, code: 415, status: unsupportedPatchType},
		{name: "patch without Content-Type", method: "PATCH", path: cmPath + "/x", body: `{"data":{}}`, code: 415,
			status: unsupportedPatchType},
		{name: "create as text/plain", method: "POST", path: cmPath, header: map[string]string{"Content-Type": "text/plain"},
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"}}`, code: 415,
			status: &statusWant{code: 415, reason: metav1.StatusReasonUnsupportedMediaType}},
		{name: "malformed Content-Type", method: "POST", path: cmPath, header: map[string]string{"Content-Type": "application/json; ;;=="},
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"}}`, code: 415,
			status: &statusWant{code: 415, reason: metav1.StatusReasonUnsupportedMediaType}},
		{name: "accepts only CBOR", method: "GET", path: cmPath + "/x", header: map[string]string{"Accept": "application/cbor"},
			code: 406, status: &statusWant{code: 406, reason: metav1.StatusReasonNotAcceptable, message: notAcceptableMessage}},
		{name: "list accepting only CBOR", method: "GET", path: cmPath, header: map[string]string{"Accept": "application/cbor"},
			code: 406, status: &statusWant{code: 406, reason: metav1.StatusReasonNotAcceptable, message: notAcceptableMessage}},
		{name: "accepts only a Table of another group", method: "GET", path: cmPath, header: map[string]string{"Accept": "application/json;as=Table;g=example.com;v=v1"},
			code: 406, status: &statusWant{code: 406, reason: metav1.StatusReasonNotAcceptable}},

		// Deletes.
		{name: "delete with a malformed body", method: "DELETE", path: cmPath + "/x", header: jsonCT, body: `{"kind":`, code: 400,
			status: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{name: "delete with an unknown propagationPolicy", method: "DELETE", path: cmPath + "/x", header: jsonCT,
			body: `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Bogus"}`, code: 422,
			status: invalidOptions("DeleteOptions", `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"`)},
		{name: "delete with dryRun=Bogus", method: "DELETE", path: cmPath + "/x?dryRun=Bogus", code: 422,
			status: &statusWant{code: 422, reason: metav1.StatusReasonInvalid, prefix: `DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: `}},
		{name: "delete of a missing object", method: "DELETE", path: cmPath + "/nope", code: 404,
			status: &statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "nope" not found`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" || tc.method == "POST" {
				body = []byte(tc.body)
			}
			res := rawCall(t, ts, tc.method, tc.path, tc.header, body)
			if res.code >= 500 {
				t.Errorf("server error %d:\n%s", res.code, res.body)
			}
			if res.code != tc.code {
				t.Errorf("HTTP status %d, want %d\n%.2000s", res.code, tc.code, res.body)
			}
			if res.code >= 400 {
				st := parseStatusBody(t, res.body)
				if int(st.Code) != res.code {
					t.Errorf("Status code %d, HTTP status %d", st.Code, res.code)
				}
				if tc.status != nil {
					checkStatus(t, st, *tc.status)
				}
				if st.Reason == metav1.StatusReasonInvalid || st.Code == 422 {
					t.Logf("422 causes: %+v", st.Details)
				}
			} else {
				var obj map[string]any
				if err := json.Unmarshal(res.body, &obj); err != nil {
					t.Fatalf("the answer is not a JSON object: %v\n%.2000s", err, res.body)
				}
				if tc.check != nil {
					tc.check(t, obj)
				}
			}
			if tc.warnings != nil {
				got := res.header.Values("Warning")
				if got == nil {
					got = []string{}
				}
				if !slices.Equal(got, tc.warnings) {
					t.Errorf("Warning headers %q, want %q", got, tc.warnings)
				}
			}
		})
	}
	// The rejected requests left the objects as they were.
	cm, err := ts.client.CoreV1().ConfigMaps("default").Get(ctx, "x", metav1.GetOptions{})
	if err != nil || cm.Data["a"] != "1" || len(cm.Data) != 1 {
		t.Errorf("configmap x after the bad requests: %v, data %v", err, cm.Data)
	}
	d, err := ts.client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || d.Generation != 1 || len(d.Spec.Template.Spec.Containers) != 1 {
		t.Errorf("deployment web after the bad requests: %v, generation %d", err, d.Generation)
	}
	list, err := ts.client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Namespace+"/"+it.Name)
	}
	if want := []string{"default/nokind", "default/x"}; !slices.Equal(names, want) {
		t.Errorf("configmaps after the bad requests %q, want %q", names, want)
	}
}

// TestBadInputStrategicPatchPaths checks that strategic patch errors name
// the path of the offending list in the Status cause (strata's patch
// errors carry paths; kube-apiserver's mostly do not).
func TestBadInputStrategicPatchPaths(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	if _, err := ts.client.AppsV1().Deployments("default").Create(context.Background(), newDeployment("web", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		patch string
		field string // the cause's field names this path
	}{
		{"$setElementOrder missing a patch item",
			`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],"containers":[{"name":"side","image":"busybox"}]}}}}`,
			"spec.template.spec.containers"},
		{"$patch bogus",
			`{"spec":{"template":{"spec":{"containers":[{"name":"web","$patch":"bogus"}]}}}}`,
			"spec.template.spec.containers"},
		{"element without its merge key",
			`{"spec":{"template":{"spec":{"containers":[{"image":"nginx:2"}]}}}}`,
			"spec.template.spec.containers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, "PATCH", depPath+"/web", smpCT, []byte(tc.patch))
			st := parseStatusBody(t, res.body)
			checkStatus(t, st, statusWant{code: 422, reason: metav1.StatusReasonInvalid})
			if st.Details == nil || len(st.Details.Causes) != 1 || !strings.HasPrefix(st.Details.Causes[0].Field, tc.field) {
				t.Errorf("details %+v, want one cause whose field starts with %q", st.Details, tc.field)
			}
			if !strings.Contains(st.Message, tc.field) {
				t.Errorf("message %q does not name %s", st.Message, tc.field)
			}
		})
	}
}

// FuzzCreateBody posts arbitrary bytes as ConfigMap and Deployment bodies
// (JSON, YAML or protobuf, with and without strict field validation and
// dry run) through the handler: the answer is never a server error and is
// always JSON, a Status whenever it is an error.
func FuzzCreateBody(f *testing.F) {
	ts := newTestServer(f)
	handler := ts.api.Handler()
	seeds := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"seed"},"data":{"a":"1"}}`,
		deploymentBody("seed", ""),
		deploymentBody("seed-unknown", `"foo":1,`),
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"g-"},"binaryData":{"b":"AAEC"}}`,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"neg"},"spec":{"replicas":-1}}`,
		`{"apiVersion":`,
		`{}`,
		`[]`,
		`null`,
		`""`,
		``,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\n",
		nested("[", "]", 2000),
		`{"metadata":{"name":"x","labels":{"a":{"b":1}}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","creationTimestamp":"not a time"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","resourceVersion":"abc","uid":7}}`,
		"k8s\x00\x0a\x0b\x0a\x02v1\x12\x09ConfigMap",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	contentTypes := []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/json; charset=utf-8"}
	queries := []string{"", "?fieldValidation=Strict", "?dryRun=All", "?fieldValidation=Ignore&dryRun=All"}
	f.Fuzz(func(t *testing.T, body []byte, sel uint8) {
		path := cmPath
		if sel&1 == 1 {
			path = depPath
		}
		ct := contentTypes[int(sel>>1)%len(contentTypes)]
		q := queries[int(sel>>3)%len(queries)]
		req := httptest.NewRequest(http.MethodPost, path+q, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		start := time.Now()
		handler.ServeHTTP(rec, req)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("POST %s (%s) %q took %v", path+q, ct, body, d)
		}
		if rec.Code >= 500 {
			t.Fatalf("POST %s (%s) %q: %d\n%s", path+q, ct, body, rec.Code, rec.Body.Bytes())
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("POST %s (%s) %q: %d, the answer is not JSON:\n%s", path+q, ct, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code >= 400 {
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != rec.Code {
				t.Fatalf("POST %s (%s) %q: %d, the answer is not its Status (%v):\n%s", path+q, ct, body, rec.Code, err, rec.Body.Bytes())
			}
		}
	})
}
