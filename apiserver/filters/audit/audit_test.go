package audit

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/sets"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/scheme"
)

var requestInfoFactory = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api")}

// serve runs one request through Init, authentication (a user named by
// the bearer token, 401 otherwise), Audit and a handler answering code
// and body, and returns the response.
func serve(t *testing.T, a *Auditor, req *http.Request, code int, contentType, body string) *http.Response {
	t.Helper()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})
	audited := a.Audit(api, func(info *request.RequestInfo) bool { return info.Verb == "watch" })
	refuse := a.FailedAuthentication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	}))
	chain := a.Init(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := requestInfoFactory.NewRequestInfo(r)
		if err != nil {
			t.Fatal(err)
		}
		ctx := request.WithRequestInfo(r.Context(), info)
		if r.Header.Get("Authorization") != "Bearer alice-token" {
			refuse.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		ctx = request.WithUser(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"devs", user.AllAuthenticated}})
		audited.ServeHTTP(w, r.WithContext(ctx))
	}))
	rec := httptest.NewRecorder()
	chain.ServeHTTP(rec, req)
	return rec.Result()
}

func newRequest(method, path, contentType, body string, token bool) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	if token {
		r.Header.Set("Authorization", "Bearer alice-token")
	}
	r.RemoteAddr = "192.0.2.7:40000"
	r.Header.Set("User-Agent", "audit-test")
	return r
}

// cmTyped is the JSON of cmProtobuf's ConfigMap as the typed object
// encodes it.
const cmTyped = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"one","namespace":"default"},"data":{"a":"b"}}`

func cmProtobuf(t *testing.T) string {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "one", Namespace: "default"}, Data: map[string]string{"a": "b"}}
	var buf strings.Builder
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(cm, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var alice = authnv1.UserInfo{Username: "alice", Groups: []string{"devs", user.AllAuthenticated}}

// TestAuditEvents: each request is logged as the policy's rule for it
// says, with the event kube-apiserver writes (times and IDs aside).
func TestAuditEvents(t *testing.T) {
	const status404 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"gone\" not found","reason":"NotFound","details":{"name":"gone","kind":"configmaps"},"code":404}`
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one","namespace":"default"},"data":{"a":"b"}}`
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","managedFields":[{"manager":"m"}]}}`
	cases := []struct {
		name                  string
		req                   *http.Request
		code                  int
		contentType, response string
		want                  *auditv1.Event // nil: nothing logged
	}{{
		name: "metadata get", req: newRequest("GET", "/api/v1/namespaces/default/pods/p", "", "", true),
		code: 200, contentType: "application/json", response: `{"kind":"Pod"}`,
		want: &auditv1.Event{Level: "Metadata", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/pods/p",
			Verb: "get", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef:      &auditv1.ObjectReference{Resource: "pods", Namespace: "default", Name: "p", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Code: 200}},
	}, {
		name: "metadata not found", req: newRequest("GET", "/api/v1/namespaces/default/secrets/gone", "", "", true),
		code: 404, contentType: "application/json", response: status404,
		want: &auditv1.Event{Level: "Metadata", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/secrets/gone",
			Verb: "get", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef: &auditv1.ObjectReference{Resource: "secrets", Namespace: "default", Name: "gone", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Status: "Failure", Message: `configmaps "gone" not found`, Reason: "NotFound",
				Details: &metav1.StatusDetails{Name: "gone", Kind: "configmaps"}, Code: 404}},
	}, {
		name: "request and response", req: newRequest("POST", "/api/v1/namespaces/default/configmaps", "application/json", cm, true),
		code: 201, contentType: "application/json", response: cm,
		want: &auditv1.Event{Level: "RequestResponse", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/configmaps",
			Verb: "create", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef:      &auditv1.ObjectReference{Resource: "configmaps", Namespace: "default", Name: "one", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Code: 201},
			RequestObject:  &runtime.Unknown{Raw: []byte(cm)}, ResponseObject: &runtime.Unknown{Raw: []byte(cm)}},
	}, {
		name: "yaml body, managed fields omitted",
		req: newRequest("PUT", "/apis/apps/v1/namespaces/default/deployments/web", "application/yaml",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n  managedFields: [{manager: m}]\n", true),
		code: 200, contentType: "application/json", response: deploy,
		want: &auditv1.Event{Level: "RequestResponse", Stage: "ResponseComplete", RequestURI: "/apis/apps/v1/namespaces/default/deployments/web",
			Verb: "update", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef:      &auditv1.ObjectReference{Resource: "deployments", Namespace: "default", Name: "web", APIGroup: "apps", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Code: 200},
			RequestObject:  &runtime.Unknown{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`)},
			ResponseObject: &runtime.Unknown{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`)}},
	}, {
		name: "request level patch", req: newRequest("PATCH", "/api/v1/namespaces/default/services/s", "application/merge-patch+json", `{"spec":{"type":"NodePort"}}`, true),
		code: 200, contentType: "application/json", response: `{"kind":"Service"}`,
		want: &auditv1.Event{Level: "Request", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/services/s",
			Verb: "patch", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef:      &auditv1.ObjectReference{Resource: "services", Namespace: "default", Name: "s", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Code: 200},
			RequestObject:  &runtime.Unknown{Raw: []byte(`{"spec":{"type":"NodePort"}}`)}},
	}, {
		name: "failed authentication", req: newRequest("GET", "/api/v1/namespaces", "", "", false),
		code: 0,
		// As kube-apiserver's: the refusal is logged as it starts.
		want: &auditv1.Event{Level: "Metadata", Stage: "ResponseStarted", RequestURI: "/api/v1/namespaces",
			Verb: "list", SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef:      &auditv1.ObjectReference{Resource: "namespaces", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Message: "Authentication failed, no credentials provided", Code: 401}},
	}, {
		name: "protobuf", req: newRequest("POST", "/api/v1/namespaces/default/configmaps", "application/vnd.kubernetes.protobuf", cmProtobuf(t), true),
		code: 201, contentType: "application/vnd.kubernetes.protobuf", response: cmProtobuf(t),
		want: &auditv1.Event{Level: "RequestResponse", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/configmaps",
			Verb: "create", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef:      &auditv1.ObjectReference{Resource: "configmaps", Namespace: "default", Name: "one", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Code: 201},
			RequestObject:  &runtime.Unknown{Raw: []byte(cmTyped)}, ResponseObject: &runtime.Unknown{Raw: []byte(cmTyped)}},
	}, {
		name: "delete's Status without a code", req: newRequest("DELETE", "/api/v1/namespaces/default/secrets/s", "", "", true),
		code: 200, contentType: "application/json", response: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"s","kind":"secrets","uid":"u1"}}`,
		want: &auditv1.Event{Level: "Metadata", Stage: "ResponseComplete", RequestURI: "/api/v1/namespaces/default/secrets/s",
			Verb: "delete", User: alice, SourceIPs: []string{"192.0.2.7"}, UserAgent: "audit-test",
			ObjectRef: &auditv1.ObjectReference{Resource: "secrets", Namespace: "default", Name: "s", APIVersion: "v1"},
			ResponseStatus: &metav1.Status{Status: "Success", Details: &metav1.StatusDetails{Name: "s", Kind: "secrets", UID: "u1"},
				Code: 200}},
	}, {
		name: "level None", req: newRequest("GET", "/healthz", "", "", true),
		code: 200, contentType: "text/plain", response: "ok",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "audit", "audit.log")
			a, err := New(Options{PolicyFile: "testdata/policy.yaml", LogPath: logPath})
			if err != nil {
				t.Fatal(err)
			}
			resp := serve(t, a, tc.req, tc.code, tc.contentType, tc.response)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			id := resp.Header.Get("Audit-Id")
			if id == "" {
				t.Error("no Audit-Id header in the response")
			}
			events := readEvents(t, logPath)
			if tc.want == nil {
				if len(events) != 0 {
					t.Fatalf("logged %d events, want none", len(events))
				}
				return
			}
			if len(events) != 1 {
				t.Fatalf("logged %d events, want 1", len(events))
			}
			got := events[0]
			if string(got.AuditID) != id {
				t.Errorf("auditID %q, Audit-Id header %q", got.AuditID, id)
			}
			got.AuditID, got.RequestReceivedTimestamp, got.StageTimestamp, got.Annotations = "", metav1.MicroTime{}, metav1.MicroTime{}, nil
			tc.want.TypeMeta = metav1.TypeMeta{Kind: "Event", APIVersion: "audit.k8s.io/v1"}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(sameJSON)); diff != "" {
				t.Errorf("event (-want +got):\n%s", diff)
			}
		})
	}
}

// sameJSON compares logged objects by their JSON.
func sameJSON(a, b *runtime.Unknown) bool {
	if a == nil || b == nil {
		return a == b
	}
	var x, y any
	return json.Unmarshal(a.Raw, &x) == nil && json.Unmarshal(b.Raw, &y) == nil && cmp.Equal(x, y)
}

func readEvents(t *testing.T, path string) []*auditv1.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []*auditv1.Event
	s := bufio.NewScanner(f)
	s.Buffer(nil, 16<<20)
	for s.Scan() {
		e := &auditv1.Event{}
		if err := json.Unmarshal(s.Bytes(), e); err != nil {
			t.Fatalf("line %q: %v", s.Text(), err)
		}
		events = append(events, e)
	}
	return events
}

// TestLogFile: the log is created 0600 in a 0700 directory.
func TestLogFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	a, err := New(Options{PolicyFile: "testdata/policy.yaml", LogPath: filepath.Join(dir, "audit.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, filepath.Join(dir, "audit.log"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}
}

// TestOptionErrors: bad flags and policies are refused with kube's words,
// naming the flag or the file.
func TestOptionErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Format: "xml"}, `--audit-log-format: invalid audit log format xml, allowed formats are "legacy,json"`},
		{Options{MaxAge: -1}, "--audit-log-maxage -1 can't be a negative number"},
		{Options{MaxBackups: -2}, "--audit-log-maxbackup -2 can't be a negative number"},
		{Options{MaxSize: -3}, "--audit-log-maxsize -3 can't be a negative number"},
		{Options{PolicyFile: "testdata/missing.yaml", LogPath: "-"}, "--audit-policy-file: failed to read file path \"testdata/missing.yaml\": open testdata/missing.yaml: no such file or directory"},
		{Options{PolicyFile: bad, LogPath: "-"}, `--audit-policy-file: rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse": from file ` + bad},
	}
	for _, tc := range cases {
		_, err := New(tc.o)
		if err == nil || err.Error() != tc.want {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestInitWithoutPolicy: with no policy, a request still gets its audit ID
// (the client's, or a new one) in the Audit-Id header, and its audit
// context drops annotations; with a policy the context takes them until
// the policy is evaluated.
func TestInitWithoutPolicy(t *testing.T) {
	enabled, err := New(Options{PolicyFile: "testdata/policy.yaml", LogPath: filepath.Join(t.TempDir(), "audit.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enabled.Close() })
	for _, tt := range []struct {
		name    string
		a       *Auditor
		id      string
		enabled bool
	}{
		{"no policy, client's ID", &Auditor{}, "client-id", false},
		{"no policy, new ID", &Auditor{}, "", false},
		{"policy", enabled, "client-id", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got bool
			h := tt.a.Init(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = audit.AuditContextFrom(r.Context()).Enabled()
			}))
			req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces", nil)
			if tt.id != "" {
				req.Header.Set("Audit-ID", tt.id)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			id := rec.Header().Get("Audit-Id")
			if got != tt.enabled || id == "" || (tt.id != "" && id != tt.id) {
				t.Errorf("annotations taken %v, Audit-Id %q; want %v, %q", got, id, tt.enabled, tt.id)
			}
		})
	}
}
