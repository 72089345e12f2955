package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// A crdStep is one kubectl command of the CRD life cycle and what it must
// print.
type crdStep struct {
	name   string
	args   []string
	code   int    // exit status
	stdout string // exact stdout, unless check is set
	stderr string // exact stderr
	// check replaces the comparison of stdout.
	check func(t *testing.T, stdout string)
}

// widgetsCRD is the CRD the apiserver package's tests serve, applied here
// with kubectl (strict field validation by default): its
// x-kubernetes-patch-* keys, which JSONSchemaProps has no fields for, are
// kept by strata, not refused.
func widgetsCRD(t *testing.T) string {
	t.Helper()
	return testdata(t, filepath.Join("..", "..", "apiserver", "testdata", "widgets-crd.yaml"))
}

// crdSteps is the life cycle of widgetsCRD: the CRD applied
// and Established, a Widget applied, listed with the printer columns,
// patched three ways, scaled, refused by the schema, pruned, explained,
// discovered, and gone with its CRD.
func crdSteps(t *testing.T) []crdStep {
	crd, widget := widgetsCRD(t), testdata(t, "widget.yaml")
	invalid, unknown := testdata(t, "widget-invalid.yaml"), testdata(t, "widget-unknown-field.yaml")
	widgetTable := func(t *testing.T, out string) {
		checkTable(t, out, [][]string{{"NAME", "SIZE", "COLOR", "AGE"}, {"w", "3", "blue", ageCell}})
	}
	get := func(name, jsonpath string) []string {
		return []string{"get", "widget", name, "-o", "jsonpath=" + jsonpath}
	}
	const (
		ports = `{range .spec.ports[*]}{.port}/{.protocol}/{.name} {end}`
		// Merged by the list-map keys (port, protocol): 80/UDP is
		// changed, 443/TCP added, 80/TCP kept; the set of tags merges too.
		strategic = `{"spec":{"ports":[{"port":80,"protocol":"UDP","name":"dns"},{"port":443,"protocol":"TCP"}],"tags":["c","a"]}}`
		merge     = `{"spec":{"size":5,"color":"green","tags":null}}`
		jsonPatch = `[{"op":"test","path":"/spec/size","value":5},` +
			`{"op":"replace","path":"/spec/size","value":6},` +
			`{"op":"remove","path":"/spec/ports/0"},` +
			`{"op":"add","path":"/spec/owner","value":"bob"}]`
	)
	return []crdStep{
		{name: "apply CRD", args: []string{"apply", "-f", crd},
			stdout: "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n"},
		{name: "wait established", args: []string{"wait", "--for", "condition=established", "--timeout=20s", "crd/widgets.example.com"},
			stdout: "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met\n"},
		{name: "apply widget", args: []string{"apply", "-f", widget}, stdout: "widget.example.com/w created\n"},
		{name: "get widgets", args: []string{"get", "widgets"}, check: widgetTable},
		{name: "get by short name", args: []string{"get", "wd"}, check: widgetTable},
		{name: "get through v1beta1", args: []string{"get", "widgets.v1beta1.example.com", "w", "-o", "jsonpath={.apiVersion} {.spec.size}"},
			stdout: "example.com/v1beta1 3"},
		// As on any cluster, the kubernetes Service is in default too.
		{name: "category all", args: []string{"get", "all", "-o", "name"}, stdout: "service/kubernetes\nwidget.example.com/w\n"},

		{name: "strategic patch", args: []string{"patch", "widget", "w", "--type", "strategic", "-p", strategic},
			stdout: "widget.example.com/w patched\n"},
		{name: "strategic patch merged", args: get("w", ports+`{.spec.tags}`),
			stdout: `80/TCP/http 80/UDP/dns 443/TCP/ ["c","a","b"]`},
		{name: "strategic patch again", args: []string{"patch", "widget", "w", "--type", "strategic", "-p", strategic},
			stdout: "widget.example.com/w patched (no change)\n"},
		{name: "merge patch", args: []string{"patch", "widget", "w", "--type", "merge", "-p", merge},
			stdout: "widget.example.com/w patched\n"},
		{name: "merge patch merged", args: get("w", `{.spec.size} {.spec.color} [{.spec.tags}] `+ports),
			stdout: "5 green [] 80/TCP/http 80/UDP/dns 443/TCP/ "},
		{name: "json patch", args: []string{"patch", "widget", "w", "--type", "json", "-p", jsonPatch},
			stdout: "widget.example.com/w patched\n"},
		{name: "json patch applied", args: get("w", `{.spec.size} {.spec.owner} `+ports),
			stdout: "6 bob 80/UDP/dns 443/TCP/ "},
		{name: "scale", args: []string{"scale", "widget", "w", "--replicas=4"}, stdout: "widget.example.com/w scaled\n"},
		{name: "scaled", args: get("w", `{.spec.size}`), stdout: "4"},

		{name: "schema refuses", args: []string{"apply", "-f", invalid}, code: 1,
			stderr: `The Widget "invalid" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1` + "\n"},
		{name: "refused not stored", args: []string{"get", "widget", "invalid"}, code: 1,
			stderr: `Error from server (NotFound): widgets.example.com "invalid" not found` + "\n"},
		{name: "unknown field pruned", args: []string{"apply", "--validate=warn", "-f", unknown},
			stdout: "widget.example.com/unknown created\n", stderr: `Warning: unknown field "spec.bogus"` + "\n"},
		{name: "pruned spec", args: get("unknown", `{.spec}`), stdout: `{"color":"red","size":2}`},
		{name: "unknown field patched", args: []string{"patch", "widget", "unknown", "--type", "merge", "-p", `{"spec":{"bogus":1}}`},
			stdout: "widget.example.com/unknown patched (no change)\n", stderr: `Warning: unknown field "spec.bogus"` + "\n"},

		{name: "explain widgets.spec.ports", args: []string{"explain", "widgets.spec.ports"}, stdout: "" +
			"GROUP:      example.com\n" +
			"KIND:       Widget\n" +
			"VERSION:    v1\n" +
			"\n" +
			"FIELD: ports <[]Object>\n" +
			"\n" +
			"\n" +
			"DESCRIPTION:\n" +
			"    <empty>\n" +
			"FIELDS:\n" +
			"  name\t<string>\n" +
			"    <no description>\n" +
			"\n" +
			"  port\t<integer> -required-\n" +
			"    <no description>\n" +
			"\n" +
			"  protocol\t<string> -required-\n" +
			"    <no description>\n" +
			"\n" +
			"\n"},
		{name: "explain deployment.spec.replicas", args: []string{"explain", "deployment.spec.replicas"},
			check: func(t *testing.T, out string) {
				// The built-in schemas beside the CRD's.
				lines := strings.Split(out, "\n")
				for i, want := range []string{"GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "", "FIELD: replicas <integer>"} {
					if i >= len(lines) || lines[i] != want {
						t.Fatalf("explain line %d: want %q\n%s", i+1, want, out)
					}
				}
			}},
		{name: "api-resources", args: []string{"api-resources", "--api-group=example.com"}, stdout: "" +
			"NAME      SHORTNAMES   APIVERSION       NAMESPACED   KIND\n" +
			"widgets   wd           example.com/v1   true         Widget\n"},

		{name: "delete CRD", args: []string{"delete", "crd", "widgets.example.com"},
			stdout: `customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted` + "\n"},
		{name: "no more widgets", args: []string{"get", "widgets"}, code: 1,
			stderr: `error: the server doesn't have a resource type "widgets"` + "\n"},
		{name: "api-resources after delete", args: []string{"api-resources", "--api-group=example.com"},
			stdout: "NAME   SHORTNAMES   APIVERSION   NAMESPACED   KIND\n"},
	}
}

// TestCRDKubectl runs the life cycle of a CustomResourceDefinition with
// each kubectl, each against a server of its own (the CRD is cluster-wide).
// Every command runs with a HOME of its own: no discovery or OpenAPI cache
// is shared between commands, so what kubectl prints depends on what the
// server serves at that moment, not on what it served before.
func TestCRDKubectl(t *testing.T) {
	t.Parallel()
	for _, kind := range kubectls {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			srv := startServer(t, t.TempDir())
			for _, step := range crdSteps(t) {
				r := kind.new(t, srv.dataDir).run(t, step.args...)
				if r.code != step.code || r.stderr != step.stderr || (step.check == nil && r.stdout != step.stdout) {
					want := "stdout " + strings.ReplaceAll(step.stdout, "\n", `\n`)
					if step.check != nil {
						want = "stdout checked below"
					}
					t.Fatalf("step %q: want exit %d, %s, stderr %q\n%v", step.name, step.code, want, step.stderr, r)
				}
				if step.check != nil {
					step.check(t, r.stdout)
					if t.Failed() {
						t.FailNow()
					}
				}
			}
		})
	}
}

// TestCRDKubectlStrictUnknownField: kubectl apply validates fields
// strictly by default (fieldValidation=Strict); a custom resource with a
// field its schema lacks is refused with kube-apiserver's message, which
// names the kind and version as for built-in kinds (transformDecodeError
// in k8s.io/apiserver/pkg/endpoints/handlers/rest.go).
func TestCRDKubectlStrictUnknownField(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	k := plainKubectl(t, srv.dataDir)
	k.exact(t, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n", "apply", "-f", widgetsCRD(t))
	k.exact(t, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com condition met\n",
		"wait", "--for", "condition=established", "--timeout=20s", "crd/widgets.example.com")

	file := testdata(t, "widget-unknown-field.yaml")
	r := plainKubectl(t, srv.dataDir).run(t, "apply", "-f", file)
	want := `Error from server (BadRequest): error when creating "` + file + `": ` +
		`Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"` + "\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("want exit 1 and stderr %q\n%v", want, r)
	}
	r = plainKubectl(t, srv.dataDir).run(t, "get", "widget", "unknown")
	if r.code != 1 || !strings.Contains(r.stderr, `widgets.example.com "unknown" not found`) {
		t.Errorf("the refused widget was stored\n%v", r)
	}
}
