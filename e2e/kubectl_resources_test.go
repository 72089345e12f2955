package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/printers"
)

// Scenarios of the kinds and subresources beyond the first served set:
// scale, ingresses, PodDisruptionBudgets, events by field selector.

// testScale scales a Deployment through its scale subresource.
func testScale(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "-n", ns)
	k.exact(t, "deployment.apps/web scaled\n", "scale", "deployment", "web", "--replicas=3", "-n", ns)
	k.exact(t, "3", "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
}

// testCreateIngressAndPDB uses kubectl's generators of the two kinds.
func testCreateIngressAndPDB(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "ingress.networking.k8s.io/web created\n", "create", "ingress", "web", "--rule=example.com/=web:80", "-n", ns)
	k.exact(t, "poddisruptionbudget.policy/web created\n", "create", "pdb", "web", "--selector=app=web", "--min-available=1", "-n", ns)
	k.exact(t, "example.com", "get", "ingress", "web", "-n", ns, "-o", "jsonpath={.spec.rules[0].host}")
	k.exact(t, "1", "get", "pdb", "web", "-n", ns, "-o", "jsonpath={.spec.minAvailable}")
}

// testDescribeEvents records an event of a Deployment (no controller runs
// to do it) and finds it where kubectl describe and kubectl events look
// for it, by involvedObject field selectors.
func testDescribeEvents(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "-n", ns)
	uid := k.ok(t, "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.metadata.uid}")
	event := strings.NewReplacer("NS", ns, "UID", uid).Replace(`{"apiVersion":"v1","kind":"Event",
 "metadata":{"name":"web.1","namespace":"NS"},
 "involvedObject":{"apiVersion":"apps/v1","kind":"Deployment","name":"web","namespace":"NS","uid":"UID"},
 "reason":"ScalingReplicaSet","message":"Scaled up replica set web-abc to 1","type":"Normal",
 "source":{"component":"deployment-controller"},"count":1,
 "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z"}`)
	file := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(file, []byte(event), 0o600); err != nil {
		t.Fatal(err)
	}
	k.exact(t, "event/web.1 created\n", "create", "-f", file)
	row := regexp.MustCompile(`(?m)^\s+Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-abc to 1$`)
	if out := k.ok(t, "describe", "deployment", "web", "-n", ns); !row.MatchString(out) {
		t.Errorf("describe deployment shows no event row %v:\n%s", row, out)
	}
	row = regexp.MustCompile(`(?m)^\S+\s+Normal\s+ScalingReplicaSet\s+Deployment/web\s+Scaled up replica set web-abc to 1$`)
	if out := k.ok(t, "events", "--for", "deployment/web", "-n", ns); !row.MatchString(out) {
		t.Errorf("kubectl events --for shows no row %v:\n%s", row, out)
	}
}

// testAPIResourcesWide compares kubectl api-resources -o wide, byte for
// byte, with the recording of kube-apiserver v1.37 (in
// apiserver/testdata, kubectl's cells separated by tabs) laid out by
// kubectl's tab writer.
func testAPIResourcesWide(t *testing.T, k *kubectl, _ string) {
	data, err := os.ReadFile("../apiserver/testdata/api-resources-v1.37.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	tw := printers.GetNewTabWriter(&want)
	_, _ = tw.Write(data)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	k.exact(t, want.String(), "api-resources", "-o", "wide")
}
