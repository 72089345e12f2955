package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

var merge3Cases = []cliCase{
	{
		name: "files: upstream's change and local's change both land",
		files: map[string]string{
			"o.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n  b: \"1\"\n",
			"u.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\"\n  b: \"1\"\n",
			"l.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n  b: \"3\" # ours\n",
		},
		args:       []string{"merge3", "--original", "o.yaml", "--upstream", "u.yaml", "--local", "l.yaml"},
		wantCode:   exitOK,
		wantStdout: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\"\n  b: \"3\" # ours\n",
	},
	{
		name: "files: a conflict is reported and upstream wins",
		files: map[string]string{
			"o.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n",
			"u.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\"\n",
			"l.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"3\"\n",
		},
		args:       []string{"merge3", "--original", "o.yaml", "--upstream", "u.yaml", "--local", "l.yaml"},
		wantCode:   exitOK,
		wantStdout: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\"\n",
		wantStderr: "conflict: l.yaml: v1 ConfigMap cfg: data.a: upstream \"2\", local \"3\"; took upstream\n",
	},
	{
		name: "files: --on-conflict=fail stops with exit 1",
		files: map[string]string{
			"o.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n",
			"u.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\"\n",
			"l.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"3\"\n",
		},
		args:     []string{"merge3", "--original", "o.yaml", "--upstream", "u.yaml", "--local", "l.yaml", "--on-conflict", "fail"},
		wantCode: exitRejected,
		wantStderr: "conflict: l.yaml: v1 ConfigMap cfg: data.a: upstream \"2\", local \"3\"; took upstream\n" +
			"error: 1 conflict(s) between upstream and local changes; nothing was written\n",
	},
	{
		name:       "two resources with one identity",
		files:      map[string]string{"o.yaml": "", "u.yaml": "", "l.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"},
		args:       []string{"merge3", "--original", "o.yaml", "--upstream", "u.yaml", "--local", "l.yaml"},
		wantCode:   exitRejected,
		wantStderr: "error: local: l.yaml: v1 ConfigMap a has the same identity as a resource in l.yaml\n",
	},
	{name: "missing --local", args: []string{"merge3", "--original", "a", "--upstream", "b"}, wantCode: exitUsage,
		wantStderr: "error: --original, --upstream and --local are all required\n"},
	{name: "bad --on-conflict", args: []string{"merge3", "--original", "a", "--upstream", "b", "--local", "c", "--on-conflict", "mine"}, wantCode: exitUsage,
		wantStderr: "error: --on-conflict \"mine\": want upstream, local or fail\n"},
}

func TestMerge3Command(t *testing.T) { runCLICases(t, merge3Cases) }

// TestMerge3InPlace merges directories into local in place and checks that
// a failing merge leaves local exactly as it was.
func TestMerge3InPlace(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"o/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n",
		"u/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\"\n",
		"l/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\" # kept comment\n",
		"l/extra":   "local notes\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"merge3", "--original", filepath.Join(dir, "o"), "--upstream", filepath.Join(dir, "u"), "--local", filepath.Join(dir, "l")}
	var stdout, stderr bytes.Buffer
	if code := run(append(args, "--on-conflict", "fail"), nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "l", "cm.yaml"))
	if want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"2\" # kept comment\n"; string(got) != want {
		t.Errorf("merged in place:\n%s\nwant:\n%s", got, want)
	}
	if notes, _ := os.ReadFile(filepath.Join(dir, "l", "extra")); string(notes) != "local notes\n" {
		t.Errorf("local-only file: %q", notes)
	}
	// A local file upstream also changed differently: fail leaves local alone.
	if err := os.WriteFile(filepath.Join(dir, "l", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := readTreeBytes(t, filepath.Join(dir, "l"))
	if code := run(append(args, "--on-conflict", "fail"), nil, &stdout, &stderr); code != exitRejected {
		t.Fatalf("exit %d, want 1", code)
	}
	if after := readTreeBytes(t, filepath.Join(dir, "l")); after != before {
		t.Errorf("a failed merge changed local:\n%s\nwas:\n%s", after, before)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary directories left behind: %v", entries)
	}
}

func readTreeBytes(t *testing.T, root string) string {
	t.Helper()
	var all bytes.Buffer
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		all.WriteString(path + "\n" + string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all.String()
}
