package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/rest"
)

// auditLine is what TestAuditLog checks of each logged event.
type auditLine struct {
	Level, Stage, Verb, Resource, Name, User string
	Code                                     int32
	Reason                                   string
	RequestData, ResponseUID                 bool // the logged objects carry the ConfigMap's data, a uid
}

// TestAuditLog runs a scripted session against a server with
// --audit-policy-file and --audit-log-path and reads the log line by
// line: one event per request the policy selects, at its level, naming the
// user, the verb and the response code; refused credentials logged too.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "audit", "audit.log")
	policy, err := filepath.Abs("testdata/audit-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dataDir, "--audit-policy-file", policy, "--audit-log-path", logPath)
	k := strataKubectl(t, dataDir)
	k.exact(t, "configmap/audited created\n", "create", "configmap", "audited", "--from-literal=a=b")
	k.exact(t, "configmap/audited\n", "get", "configmap", "audited", "-o", "name")
	k.exact(t, "configmap \"audited\" deleted from default namespace\n", "delete", "configmap", "audited")
	if r := k.run(t, "get", "secret", "missing"); r.code != 1 {
		t.Fatalf("get of a missing secret: %v", r)
	}
	cfg := srv.restConfig(t)
	req, _ := http.NewRequest("GET", cfg.Host+"/api/v1/namespaces/default/secrets", nil)
	req.Header.Set("Authorization", "Bearer not-a-token")
	client, err := rest.HTTPClientFor(rest.AnonymousClientConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.stop(t) // the log is complete once the server has stopped

	admin := "strata-admin"
	want := []auditLine{
		{Level: "RequestResponse", Stage: "ResponseComplete", Verb: "create", Resource: "configmaps", Name: "audited", User: admin, Code: 201, RequestData: true, ResponseUID: true},
		{Level: "RequestResponse", Stage: "ResponseComplete", Verb: "get", Resource: "configmaps", Name: "audited", User: admin, Code: 200, ResponseUID: true},
		{Level: "RequestResponse", Stage: "ResponseComplete", Verb: "delete", Resource: "configmaps", Name: "audited", User: admin, Code: 200},
		// kubectl delete waits for the object to go.
		{Level: "RequestResponse", Stage: "ResponseComplete", Verb: "get", Resource: "configmaps", Name: "audited", User: admin, Code: 404, Reason: "NotFound"},
		{Level: "Metadata", Stage: "ResponseComplete", Verb: "get", Resource: "secrets", Name: "missing", User: admin, Code: 404, Reason: "NotFound"},
		{Level: "Metadata", Stage: "ResponseStarted", Verb: "list", Resource: "secrets", Code: 401},
	}
	if diff := cmp.Diff(want, readAuditLog(t, logPath)); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

func readAuditLog(t *testing.T, path string) []auditLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []auditLine
	s := bufio.NewScanner(f)
	s.Buffer(nil, 16<<20)
	for s.Scan() {
		var e auditv1.Event
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			t.Fatalf("audit log line %q: %v", s.Text(), err)
		}
		if e.Kind != "Event" || e.APIVersion != "audit.k8s.io/v1" || e.AuditID == "" {
			t.Errorf("audit log line %q: not an audit.k8s.io/v1 Event with an ID", s.Text())
		}
		l := auditLine{Level: string(e.Level), Stage: string(e.Stage), Verb: e.Verb, User: e.User.Username}
		if e.ObjectRef != nil {
			l.Resource, l.Name = e.ObjectRef.Resource, e.ObjectRef.Name
		}
		if e.ResponseStatus != nil {
			l.Code, l.Reason = e.ResponseStatus.Code, string(e.ResponseStatus.Reason)
		}
		if e.RequestObject != nil {
			var cm struct{ Data map[string]string }
			l.RequestData = json.Unmarshal(e.RequestObject.Raw, &cm) == nil && cm.Data["a"] == "b"
		}
		if e.ResponseObject != nil {
			var obj struct{ Metadata struct{ UID string } }
			l.ResponseUID = json.Unmarshal(e.ResponseObject.Raw, &obj) == nil && obj.Metadata.UID != ""
		}
		lines = append(lines, l)
	}
	return lines
}
