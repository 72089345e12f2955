package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliCase runs `strata` with args in a directory holding files, and expects
// an exit status, standard output (a golden file under testdata/cli when
// golden is set) and standard error.
type cliCase struct {
	name       string
	files      map[string]string
	stdin      string
	args       []string
	wantCode   int
	wantStdout string // exact; ignored when golden is set
	golden     string
	wantStderr string
}

const deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},` +
	`"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`

var patchCases = []cliCase{
	{
		name:     "README example: env edited, deleted, added and reordered, comments kept",
		args:     []string{"patch", "-f", "../../examples/deployment.yaml", "--patch-file", "../../examples/env-patch.yaml"},
		wantCode: exitOK, golden: "readme-example.yaml",
	},
	{
		name:     "JSON in, JSON out, containers merged by name",
		files:    map[string]string{"d.json": deploymentJSON},
		args:     []string{"patch", "-f", "d.json", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"log","image":"busybox"}]}}}}`},
		wantCode: exitOK, golden: "json-in-json-out.json",
	},
	{
		name:     "YAML patch on a JSON document, YAML out",
		files:    map[string]string{"d.json": deploymentJSON},
		args:     []string{"patch", "-f", "d.json", "-p", "spec: {replicas: 3}", "-o", "yaml"},
		wantCode: exitOK, golden: "json-in-yaml-out.yaml",
	},
	{
		name:     "kubernetes compatibility mode orders as apimachinery",
		files:    map[string]string{"p.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  finalizers: [b, e, a]\n"},
		args:     []string{"patch", "-f", "p.yaml", "-p", `{"metadata":{"$setElementOrder/finalizers":["a","b","f"],"finalizers":["f"]}}`, "--compat", "kubernetes"},
		wantCode: exitOK, wantStdout: "apiVersion: v1\nkind: Pod\nmetadata:\n  finalizers: [e, a, b, f]\n",
	},
	{
		name:     "merge patch replaces lists",
		files:    map[string]string{"d.json": deploymentJSON},
		args:     []string{"patch", "-f", "d.json", "--type", "merge", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"log"}]}}}}`, "-o", "yaml"},
		wantCode: exitOK, golden: "merge-patch.yaml",
	},
	{
		name:     "JSON patch",
		files:    map[string]string{"d.json": deploymentJSON},
		args:     []string{"patch", "-f", "d.json", "--type", "json", "-p", `[{"op":"replace","path":"/spec/replicas","value":5}]`},
		wantCode: exitOK, golden: "json-patch.json",
	},
	{
		name:     "standard input",
		stdin:    "metadata:\n  name: a # keep\n",
		args:     []string{"patch", "-f", "-", "-p", "metadata: {labels: {x: y}}"},
		wantCode: exitOK, wantStdout: "metadata:\n  name: a # keep\n  labels:\n    x: y\n",
	},
	{
		name:  "--schema: a CRD's list-map-keys make a two-field merge key",
		files: map[string]string{"c.yaml": "apiVersion: stable.example.com/v1\nkind: CronTab\nspec:\n  ports:\n    - {containerPort: 80, protocol: TCP, name: http}\n    - {containerPort: 80, protocol: UDP, name: dns}\n"},
		args: []string{"patch", "-f", "c.yaml", "--schema", "{repo}/schema/testdata/crd.yaml",
			"-p", `{"spec":{"ports":[{"containerPort":80,"protocol":"UDP","name":"quic"}]}}`},
		wantCode:   exitOK,
		wantStdout: "apiVersion: stable.example.com/v1\nkind: CronTab\nspec:\n  ports:\n    - {containerPort: 80, protocol: TCP, name: http}\n    - {containerPort: 80, protocol: UDP, name: quic}\n",
	},
	{
		name:       "--schema: a patch element lacking one key field is rejected",
		files:      map[string]string{"c.yaml": "apiVersion: stable.example.com/v1\nkind: CronTab\nspec:\n  ports: [{containerPort: 80, protocol: TCP}]\n"},
		args:       []string{"patch", "-f", "c.yaml", "--schema", "{repo}/schema/testdata/crd.yaml", "-p", `{"spec":{"ports":[{"containerPort":80}]}}`},
		wantCode:   exitRejected,
		wantStderr: "error: c.yaml: patch: spec.ports: missing merge key: item 0 of the patch list lacks merge key containerPort,protocol\n",
	},
	{
		name:       "--schema-def names a definition with no such name",
		files:      map[string]string{"c.yaml": "a: 1\n"},
		args:       []string{"patch", "-f", "c.yaml", "--schema", "{repo}/schema/testdata/crd.yaml", "--schema-def", "Nope", "-p", "{}"},
		wantCode:   exitUsage,
		wantStderr: "error: --schema-def \"Nope\": no such definition in the --schema documents\n",
	},
	// Rejected input: exit 1, one line naming the file, the patch, the path and the rule.
	{
		name:       "missing merge key",
		files:      map[string]string{"d.json": deploymentJSON},
		args:       []string{"patch", "-f", "d.json", "-p", `{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}`},
		wantCode:   exitRejected,
		wantStderr: "error: d.json: patch: spec.template.spec.containers: missing merge key: item 0 of the patch list lacks merge key name\n",
	},
	{
		name:       "malformed JSON document",
		files:      map[string]string{"d.json": `{"a": }`},
		args:       []string{"patch", "-f", "d.json", "-p", `{}`},
		wantCode:   exitRejected,
		wantStderr: "error: d.json: patch: (root): malformed document: document: invalid JSON at byte 6: unexpected '}' where a value should be\n",
	},
	{
		name:       "malformed YAML document",
		files:      map[string]string{"d.yaml": "a: [1, 2\n"},
		args:       []string{"patch", "-f", "d.yaml", "-p", `{}`},
		wantCode:   exitRejected,
		wantStderr: "error: d.yaml: patch: invalid YAML: yaml: line 1: did not find expected ',' or ']'\n",
	},
	{
		name:       "malformed patch file",
		files:      map[string]string{"d.yaml": "a: 1\n", "p.yaml": "b: [\n"},
		args:       []string{"patch", "-f", "d.yaml", "--patch-file", "p.yaml"},
		wantCode:   exitRejected,
		wantStderr: "error: d.yaml: p.yaml: patch: invalid YAML: yaml: line 1: did not find expected node content\n",
	},
	{
		name:       "empty document",
		files:      map[string]string{"d.yaml": "\n"},
		args:       []string{"patch", "-f", "d.yaml", "-p", `{}`},
		wantCode:   exitRejected,
		wantStderr: "error: d.yaml: patch: the document is empty\n",
	},
	{
		name:       "YAML alias bomb",
		files:      map[string]string{"d.yaml": "a: 1\n", "bomb.yaml": aliasBomb()},
		args:       []string{"patch", "-f", "d.yaml", "--patch-file", "bomb.yaml"},
		wantCode:   exitRejected,
		wantStderr: "error: d.yaml: bomb.yaml: (root): malformed document: patch: more than 1048576 nodes once aliases are expanded, or nesting deeper than 1000 levels\n",
	},
	{
		name:       "multi-document file names the document",
		files:      map[string]string{"d.yaml": "a: [1]\n---\na: {b: 1}\n"},
		args:       []string{"patch", "-f", "d.yaml", "-p", `{"$setElementOrder/a": [1]}`},
		wantCode:   exitRejected,
		wantStderr: "error: d.yaml: patch: document 1: a: invalid directive: $setElementOrder needs a merge list, but the schema gives this field no merge strategy\n",
	},
	{
		name:       "missing file",
		args:       []string{"patch", "-f", "nope.yaml", "-p", `{}`},
		wantCode:   exitRejected,
		wantStderr: "error: reading the document: open nope.yaml: no such file or directory\n",
	},
	// Usage errors: exit 2.
	{name: "no -f", args: []string{"patch", "-p", "{}"}, wantCode: exitUsage, wantStderr: "error: -f FILE is required\n"},
	{name: "no patch", args: []string{"patch", "-f", "x"}, wantCode: exitUsage, wantStderr: "error: give the patch with -p PATCH or --patch-file FILE\n"},
	{name: "two patches", args: []string{"patch", "-f", "x", "-p", "{}", "--patch-file", "y"}, wantCode: exitUsage, wantStderr: "error: give the patch with -p or --patch-file, not both\n"},
	{name: "bad type", args: []string{"patch", "-f", "x", "-p", "{}", "--type", "xml"}, wantCode: exitUsage, wantStderr: "error: --type \"xml\": want strategic, merge or json\n"},
	{name: "bad output", args: []string{"patch", "-f", "x", "-p", "{}", "-o", "toml"}, wantCode: exitUsage, wantStderr: "error: -o \"toml\": want yaml or json\n"},
	{name: "bad compat", args: []string{"patch", "-f", "x", "-p", "{}", "--compat", "k8s"}, wantCode: exitUsage, wantStderr: "error: --compat \"k8s\": the only compatibility mode is kubernetes\n"},
	{name: "unknown flag", args: []string{"patch", "--frobnicate"}, wantCode: exitUsage, wantStderr: "error: unknown flag: --frobnicate\n"},
	{name: "in-place on stdin", args: []string{"patch", "-f", "-", "-p", "{}", "--in-place"}, wantCode: exitUsage, wantStderr: "error: --in-place needs a file, not standard input\n"},
	{name: "unknown command", args: []string{"frobnicate"}, wantCode: exitUsage, wantStderr: "error: unknown command \"frobnicate\" for \"strata\"\n"},
}

// aliasBomb is the classic billion-laughs document.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		b.WriteString(name + ": &" + name + " [")
		for i := 0; i < 10; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = name
	}
	return b.String()
}

func TestPatchCommand(t *testing.T) { runCLICases(t, patchCases) }

func runCLICases(t *testing.T, cases []cliCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "{repo}", repoRoot)
			}
			if len(c.files) > 0 || c.stdin != "" {
				t.Chdir(dir)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(c.stdin), &stdout, &stderr)
			if code != c.wantCode {
				t.Errorf("exit status %d, want %d (stderr: %s)", code, c.wantCode, stderr.String())
			}
			if got, want := stderr.String(), strings.ReplaceAll(c.wantStderr, "{repo}", repoRoot); got != want {
				t.Errorf("stderr\n got: %q\nwant: %q", got, want)
			}
			want := c.wantStdout
			if c.golden != "" {
				want = readGolden(t, c.golden, stdout.Bytes())
			}
			if got := stdout.String(); got != want {
				t.Errorf("stdout\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

var update = os.Getenv("UPDATE_GOLDEN") != ""

func readGolden(t *testing.T, name string, got []byte) string {
	t.Helper()
	file := filepath.Join(goldenDir, name)
	if update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(want)
}

// repoRoot is the repository's top directory, for fixtures outside cmd/strata.
var repoRoot = func() string {
	root, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return root
}()

var goldenDir = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "testdata", "cli")
}()

// TestPatchInPlace checks that --in-place rewrites the file on success and
// leaves it byte for byte alone when the patch is rejected.
func TestPatchInPlace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "d.yaml")
	orig := "spec:\n  replicas: 1 # hand-tuned\n"
	if err := os.WriteFile(file, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"patch", "-f", file, "-p", "spec: {replicas: [}", "--in-place"}, nil, &stdout, &stderr); code != exitRejected {
		t.Fatalf("bad patch: exit %d, want 1", code)
	}
	if got, _ := os.ReadFile(file); string(got) != orig {
		t.Fatalf("a rejected patch changed the file:\n%s", got)
	}
	if code := run([]string{"patch", "-f", file, "-p", "spec: {replicas: 2}", "--in-place"}, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, _ := os.ReadFile(file)
	if want := "spec:\n  replicas: 2 # hand-tuned\n"; string(got) != want {
		t.Errorf("file after --in-place:\n%s\nwant:\n%s", got, want)
	}
	if info, _ := os.Stat(file); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", info.Mode().Perm())
	}
	if stdout.Len() != 0 {
		t.Errorf("--in-place printed %q", stdout.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}
