package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// A kubectl scenario runs in a namespace of its own on a shared server.
type scenario struct {
	name string
	run  func(t *testing.T, k *kubectl, ns string)
}

var scenarios = []scenario{
	{"apply", testApply},
	{"chunk-size", testChunkSize},
	{"patch", testPatch},
	{"watch", testWatch},
	{"delete", testDelete},
	{"get-deployments", testGetDeployments},
	{"get-pods", testGetPods},
	{"get-all", testGetAll},
	{"api-resources", testAPIResources},
	{"explain", testExplain},
	{"version", testVersion},
	{"server-side-apply", testServerSideApply},
	{"client-to-server-side", testClientToServerSide},
	{"applyset", testApplySet},
	{"prune-allow-list", testPruneAllowList},
	{"scale", testScale},
	{"create-ingress-pdb", testCreateIngressAndPDB},
	{"describe-events", testDescribeEvents},
	{"api-resources-wide", testAPIResourcesWide},
	{"drain", testDrain},
	{"certificate-approve", testCertificateApprove},
	{"garbage-collection", testGarbageCollection},
}

// TestKubectl runs every scenario with both kubectls against one server.
func TestKubectl(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	for _, kind := range kubectls {
		t.Run(kind.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					t.Parallel()
					k := kind.new(t, srv.dataDir)
					ns := sc.name + "-" + kind.name
					k.exact(t, "namespace/"+ns+" created\n", "create", "namespace", ns)
					// Scenarios create pods, which the ServiceAccount
					// admission plugin refuses until the account exists.
					k.waitDefaultServiceAccount(t, ns)
					sc.run(t, k, ns)
				})
			}
		})
	}
}

// testApply applies a Deployment, then the same with its env list
// reordered and shortened, then that again: created, configured (the live
// list exactly as applied), unchanged.
func testApply(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "deployment.apps/web created\n", "apply", "-n", ns, "-f", testdata(t, "deployment-env-abc.yaml"))
	env := []string{"get", "deployment", "web", "-n", ns, "-o",
		`jsonpath={range .spec.template.spec.containers[0].env[*]}{.name}={.value} {end}`}
	k.exact(t, "A=1 B=2 C=3 ", env...)

	k.exact(t, "deployment.apps/web configured\n", "apply", "-n", ns, "-f", testdata(t, "deployment-env-ca.yaml"))
	k.exact(t, "C=3 A=1 ", env...)

	k.exact(t, "deployment.apps/web unchanged\n", "apply", "-n", ns, "-f", testdata(t, "deployment-env-ca.yaml"))
	k.exact(t, "C=3 A=1 ", env...)
}

// testChunkSize lists five ConfigMaps (four and the namespace's
// kube-root-ca.crt) two at a time: all five are printed in one table, read
// with a first page and two continued pages.
func testChunkSize(t *testing.T, k *kubectl, ns string) {
	names := []string{"cm-1", "cm-2", "cm-3", "cm-4"}
	for _, name := range names {
		k.exact(t, "configmap/"+name+" created\n", "create", "configmap", name, "-n", ns)
	}
	waitForRootCA(t, k, ns)
	r := k.run(t, "get", "configmaps", "-n", ns, "--chunk-size=2", "-v=6")
	if r.code != 0 {
		t.Fatalf("want exit 0\n%v", r)
	}
	want := [][]string{{"NAME", "DATA", "AGE"}}
	for _, name := range names {
		want = append(want, []string{name, "0", ageCell})
	}
	checkTable(t, r.stdout, append(want, []string{"kube-root-ca.crt", "1", ageCell}))

	// Request log lines of -v=6: "Response" verb="GET" url="https://…/configmaps?limit=2" …
	lists := regexp.MustCompile(`url="[^"]*/api/v1/namespaces/` + regexp.QuoteMeta(ns) + `/configmaps\?([^"]*)"`)
	var first, continued int
	for _, m := range lists.FindAllStringSubmatch(r.stderr, -1) {
		query := m[1]
		if !strings.Contains("&"+query+"&", "&limit=2&") {
			t.Errorf("list request without limit=2: %s", query)
		}
		if strings.Contains("&"+query, "&continue=") {
			continued++
		} else {
			first++
		}
	}
	if first != 1 || continued != 2 {
		t.Errorf("list requests: %d first pages and %d continued, want 1 and 2 (five items, limit=2)\nstderr:\n%s", first, continued, r.stderr)
	}
}

// waitForRootCA waits until the controllers have published kube-root-ca.crt
// in ns, a moment after its creation.
func waitForRootCA(t *testing.T, k *kubectl, ns string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := k.run(t, "get", "configmap", "kube-root-ca.crt", "-n", ns, "-o", "name")
		if r.code == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kube-root-ca.crt in %s\n%v", ns, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testPatch patches a Deployment with each patch type and checks the
// fields each changed.
func testPatch(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "-n", ns)
	get := func(jsonpath string) []string {
		return []string{"get", "deployment", "web", "-n", ns, "-o", "jsonpath=" + jsonpath}
	}

	// Strategic: containers merge by name, so the image stays.
	strategic := `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","env":[{"name":"X","value":"1"}]}]}}}}`
	k.exact(t, "deployment.apps/web patched\n", "patch", "deployment", "web", "-n", ns, "--type", "strategic", "-p", strategic)
	k.exact(t, "nginx nginx:1.27 X=1",
		get(`{range .spec.template.spec.containers[*]}{.name} {.image} {range .env[*]}{.name}={.value}{end}{end}`)...)
	k.exact(t, "deployment.apps/web patched (no change)\n", "patch", "deployment", "web", "-n", ns, "--type", "strategic", "-p", strategic)

	// Merge: null deletes a key, maps merge, scalars replace.
	merge := `{"metadata":{"labels":{"app":null,"tier":"web"}},"spec":{"replicas":3}}`
	k.exact(t, "deployment.apps/web patched\n", "patch", "deployment", "web", "-n", ns, "--type", "merge", "-p", merge)
	k.exact(t, `{"tier":"web"} 3`, get(`{.metadata.labels} {.spec.replicas}`)...)

	// JSON: test, replace, remove, add.
	jsonPatch := `[{"op":"test","path":"/spec/replicas","value":3},` +
		`{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.28"},` +
		`{"op":"remove","path":"/spec/template/spec/containers/0/env"},` +
		`{"op":"add","path":"/metadata/annotations","value":{"note":"json"}}]`
	k.exact(t, "deployment.apps/web patched\n", "patch", "deployment", "web", "-n", ns, "--type", "json", "-p", jsonPatch)
	k.exact(t, `nginx:1.28 [] {"note":"json"}`,
		get(`{.spec.template.spec.containers[0].image} [{.spec.template.spec.containers[0].env}] {.metadata.annotations}`)...)
}

// testWatch watches ConfigMaps: the existing one is listed, then one
// created and one changed while the watch runs appear.
func testWatch(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "configmap/w1 created\n", "create", "configmap", "w1", "-n", ns)
	w := k.start(t, "get", "configmaps", "-n", ns, "-w")
	const wait = 20 * time.Second
	header := w.next(t, wait, "header", func(f []string) bool { return len(f) > 0 && f[0] == "NAME" })
	if !slices.Equal(header, []string{"NAME", "DATA", "AGE"}) {
		t.Errorf("header %q, want NAME DATA AGE", header)
	}
	w.next(t, wait, "row of w1", rowIs("w1", "0"))

	k.exact(t, "configmap/w2 created\n", "create", "configmap", "w2", "--from-literal=k=v", "-n", ns)
	w.next(t, wait, "row of w2 (created during the watch)", rowIs("w2", "1"))

	k.exact(t, "configmap/w1 patched\n", "patch", "configmap", "w1", "-n", ns, "--type", "merge", "-p", `{"data":{"a":"1","b":"2"}}`)
	w.next(t, wait, "row of w1 with DATA 2 (changed during the watch)", rowIs("w1", "2"))
	w.stop()
}

// rowIs matches a table row by its first cells.
func rowIs(cells ...string) func([]string) bool {
	return func(f []string) bool { return len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) }
}

// testDelete deletes a Deployment: kubectl's fixed message, then NotFound.
func testDelete(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "-n", ns)
	k.exact(t, `deployment.apps "web" deleted from `+ns+" namespace\n", "delete", "deployment", "web", "-n", ns)
	r := k.run(t, "get", "deployment", "web", "-n", ns)
	want := `Error from server (NotFound): deployments.apps "web" not found` + "\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("after delete: want exit 1 and stderr %q\n%v", want, r)
	}
}

// testGetDeployments checks the Deployment table (no controller runs, so
// nothing is ready).
func testGetDeployments(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "-n", ns)
	want := [][]string{
		{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		{"web", "0/2", "0", "0", ageCell},
	}
	checkTable(t, k.ok(t, "get", "deployments", "-n", ns), want)
	checkTable(t, k.ok(t, "get", "deploy", "-n", ns), want)
}

// testGetPods checks the Pod table of a Pod no kubelet runs.
func testGetPods(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "pod/p1 created\n", "run", "p1", "--image=nginx:1.27", "-n", ns)
	want := [][]string{
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE"},
		{"p1", "0/1", "Pending", "0", ageCell},
	}
	checkTable(t, k.ok(t, "get", "pods", "-n", ns), want)
	checkTable(t, k.ok(t, "get", "po", "-n", ns), want)
}

// testGetAll lists the "all" category: one table per kind present.
func testGetAll(t *testing.T, k *kubectl, ns string) {
	k.exact(t, "pod/p1 created\n", "run", "p1", "--image=nginx:1.27", "-n", ns)
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "-n", ns)
	out := k.ok(t, "get", "all", "-n", ns)
	blocks := strings.Split(strings.TrimSuffix(out, "\n"), "\n\n")
	if len(blocks) != 2 {
		t.Fatalf("get all printed %d tables, want 2 (pods, deployments):\n%s", len(blocks), out)
	}
	checkTable(t, blocks[0], [][]string{
		{"NAME", "READY", "STATUS", "RESTARTS", "AGE"},
		{"pod/p1", "0/1", "Pending", "0", ageCell},
	})
	checkTable(t, blocks[1], [][]string{
		{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		{"deployment.apps/web", "0/1", "0", "0", ageCell},
	})
}

// testAPIResources checks a few rows of api-resources.
func testAPIResources(t *testing.T, k *kubectl, _ string) {
	rows := table(k.ok(t, "api-resources"))
	if len(rows) == 0 || !slices.Equal(rows[0], []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}) {
		t.Fatalf("api-resources header %q, want NAME SHORTNAMES APIVERSION NAMESPACED KIND", rows)
	}
	for _, want := range [][]string{
		{"deployments", "deploy", "apps/v1", "true", "Deployment"},
		{"pods", "po", "v1", "true", "Pod"},
		{"configmaps", "cm", "v1", "true", "ConfigMap"},
		{"namespaces", "ns", "v1", "false", "Namespace"},
		{"jobs", "batch/v1", "true", "Job"},
	} {
		i := slices.IndexFunc(rows, func(r []string) bool { return r[0] == want[0] })
		if i < 0 {
			t.Errorf("api-resources has no row %q", want)
		} else if !slices.Equal(rows[i], want) {
			t.Errorf("api-resources row %q, want %q", rows[i], want)
		}
	}
}

// testExplain needs the server's OpenAPI v3 document.
func testExplain(t *testing.T, k *kubectl, _ string) {
	out := k.ok(t, "explain", "deployment.spec.replicas")
	lines := strings.Split(out, "\n")
	for i, want := range []string{"GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "", "FIELD: replicas <integer>"} {
		if i >= len(lines) || strings.TrimRight(lines[i], " ") != want {
			t.Fatalf("explain line %d: want %q\n%s", i+1, want, out)
		}
	}
	desc := strings.Join(strings.Fields(out), " ")
	const want = "DESCRIPTION: Number of desired pods. This is a pointer to distinguish between explicit zero and not specified. Defaults to 1."
	if !strings.Contains(desc, want) {
		t.Errorf("explain: no %q in\n%s", want, out)
	}
}

// testVersion checks the server version kubectl reports.
func testVersion(t *testing.T, k *kubectl, _ string) {
	r := k.run(t, "version", "-o", "json")
	if r.code != 0 {
		t.Fatalf("want exit 0\n%v", r)
	}
	var got struct {
		ClientVersion, ServerVersion *struct{ Major, Minor, GitVersion string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.ServerVersion == nil {
		t.Fatalf("version -o json: %v, no serverVersion\n%v", err, r)
	}
	major, minor, _ := parseMajorMinor(kubeVersion)
	sv := got.ServerVersion
	if sv.Major != major || sv.Minor != minor || !sameRelease(sv.GitVersion, kubeVersion) {
		t.Errorf("server version %+v, want major %s, minor %s, gitVersion %s", *sv, major, minor, kubeVersion)
	}
	if k.name == "kubectl" {
		// This kubectl is the release build of the same version: no skew warning.
		if got.ClientVersion == nil || got.ClientVersion.GitVersion != kubeVersion || r.stderr != "" {
			t.Errorf("want client version %s and no stderr\n%v", kubeVersion, r)
		}
	}

	out := k.run(t, "version").stdout
	if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
		v, ok := strings.CutPrefix(l, "Server Version: ")
		return ok && sameRelease(v, kubeVersion)
	}) {
		t.Errorf("kubectl version: no line \"Server Version: %s\"\n%s", kubeVersion, out)
	}
}

// sameRelease reports whether version is release (v1.37.2), possibly with
// build metadata (v1.37.2+strata) as distributions such as k3s add.
func sameRelease(version, release string) bool {
	v, err := utilversion.ParseSemantic(version)
	r, rerr := utilversion.ParseSemantic(release)
	if err != nil || rerr != nil || v.PreRelease() != "" {
		return false
	}
	return v.Major() == r.Major() && v.Minor() == r.Minor() && v.Patch() == r.Patch()
}

// testdata is the absolute path of a file in testdata/ (kubectl runs in
// another directory).
func testdata(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// ageCell in a wanted table matches any AGE (0s, 12s, 3m4s, …).
const ageCell = "<age>"

var agePattern = regexp.MustCompile(`^[0-9]+[smhdy]([0-9]+[smhdy])?$`)

// checkTable compares kubectl's table output with want, row by row and
// cell by cell.
func checkTable(t *testing.T, out string, want [][]string) {
	t.Helper()
	got := table(out)
	match := len(got) == len(want)
	for i := 0; match && i < len(got); i++ {
		match = len(got[i]) == len(want[i])
		for j := 0; match && j < len(got[i]); j++ {
			if want[i][j] == ageCell {
				match = agePattern.MatchString(got[i][j])
			} else {
				match = got[i][j] == want[i][j]
			}
		}
	}
	if !match {
		t.Errorf("table:\n%s\nwant rows %s", out, fmt.Sprint(want))
	}
}
