package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pkgRepo makes a git repository with a package "web" at tags v1 and v2.
func pkgRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "up")
	gitCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@strata.invalid", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(image string) {
		os.MkdirAll(filepath.Join(dir, "web"), 0o755)
		os.WriteFile(filepath.Join(dir, "web", "deploy.yaml"), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: web\n        image: "+image+"\n"), 0o644)
	}
	os.MkdirAll(dir, 0o755)
	gitCmd("init", "-q")
	write("nginx:1")
	gitCmd("add", "-A")
	gitCmd("commit", "-qm", "v1")
	gitCmd("tag", "v1")
	write("nginx:2")
	gitCmd("commit", "-qam", "v2")
	gitCmd("tag", "v2")
	return dir
}

func runStrata(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestPkgGetAndUpdate(t *testing.T) {
	repo := pkgRepo(t)
	t.Chdir(t.TempDir())
	code, out, errOut := runStrata(t, "pkg", "get", repo+"/web@v1")
	if code != exitOK || !strings.HasPrefix(out, "fetched "+repo+"/web@v1 (") || !strings.HasSuffix(out, ") into web\n") || errOut != "" {
		t.Fatalf("get: %d %q %q", code, out, errOut)
	}
	deploy := "web/deploy.yaml"
	data, _ := os.ReadFile(deploy)
	os.WriteFile(deploy, []byte(strings.Replace(string(data), "nginx:1", "nginx:local", 1)), 0o644)
	code, out, errOut = runStrata(t, "pkg", "update", "web@v2")
	wantErr := "conflict: web/deploy.yaml: apps/v1 Deployment web: spec.template.spec.containers[name=web].image: upstream nginx:2, local nginx:local; took upstream\n"
	if code != exitOK || !strings.HasPrefix(out, "updated web to v2 (") {
		t.Fatalf("update: %d %q %q", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "conflict: ") || !strings.Contains(errOut, "nginx:2") || !strings.Contains(errOut, "took upstream") {
		t.Errorf("stderr %q, want a line like %q", errOut, wantErr)
	}
}

// TestPkgGetStrategy: pkg get --strategy writes upstream.updateStrategy, as
// kpt pkg get --strategy does.
func TestPkgGetStrategy(t *testing.T) {
	repo := pkgRepo(t)
	t.Chdir(t.TempDir())
	code, _, errOut := runStrata(t, "pkg", "get", repo+"/web@v1", "ff", "--strategy", "fast-forward")
	if code != exitOK || errOut != "" {
		t.Fatalf("get: %d %q", code, errOut)
	}
	data, err := os.ReadFile("ff/Kptfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n  updateStrategy: fast-forward\n") {
		t.Errorf("Kptfile without updateStrategy: fast-forward:\n%s", data)
	}
}

// TestPkgDiff: pkg diff prints nothing for an unchanged package and the
// local change as a unified diff.
func TestPkgDiff(t *testing.T) {
	repo := pkgRepo(t)
	t.Chdir(t.TempDir())
	if code, _, errOut := runStrata(t, "pkg", "get", repo+"/web@v1", "web"); code != exitOK {
		t.Fatal(errOut)
	}
	if code, out, errOut := runStrata(t, "pkg", "diff", "web"); code != exitOK || out != "" || errOut != "" {
		t.Fatalf("unchanged: %d %q %q", code, out, errOut)
	}
	data, _ := os.ReadFile("web/deploy.yaml")
	os.WriteFile("web/deploy.yaml", []byte(strings.Replace(string(data), "nginx:1", "nginx:local", 1)), 0o644)
	code, out, errOut := runStrata(t, "pkg", "diff", "web")
	if code != exitOK || errOut != "" || !strings.HasPrefix(out, "diff -r -u -x .git upstream@") ||
		!strings.Contains(out, "\n+        image: nginx:local\n") {
		t.Errorf("changed: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runStrata(t, "pkg", "diff", "web@"); code != exitUsage || errOut != "error: web@: empty ref after @\n" {
		t.Errorf("empty ref: %d %q", code, errOut)
	}
}

func TestPkgBadInput(t *testing.T) {
	repo := pkgRepo(t)
	notGit := t.TempDir()
	t.Chdir(t.TempDir())
	if code, _, errOut := runStrata(t, "pkg", "get", repo+"/web@v1", "web"); code != exitOK {
		t.Fatal(errOut)
	}
	os.WriteFile("bad", []byte("x"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"pkg", "update", "web", "--strategy", "rebase"}, exitUsage, `error: --strategy: unknown update strategy "rebase"; want resource-merge, fast-forward, force-delete-replace or copy-merge` + "\n"},
		{[]string{"pkg", "update", "web", "--on-conflict", "maybe"}, exitUsage, `error: --on-conflict "maybe": want upstream, local or fail` + "\n"},
		{[]string{"pkg", "update", "web@"}, exitUsage, "error: web@: empty ref after @\n"},
		{[]string{"pkg", "update", "web@v9"}, exitRejected, "error: " + repo + `: ref "v9": no branch, tag or commit of that name` + "\n"},
		{[]string{"pkg", "get", notGit + "/pkg"}, exitRejected, "error: " + notGit + "/pkg: not a git repository\n"},
		{[]string{"pkg", "get", repo + "/web@v1", "web"}, exitRejected, "error: web: already exists and is not empty\n"},
		{[]string{"pkg", "update", "."}, exitRejected, "error: Kptfile: no Kptfile; not a kpt package\n"},
		{[]string{"pkg", "get"}, exitUsage, "error: accepts between 1 and 2 arg(s), received 0\n"},
		{[]string{"pkg", "get", repo + "/web@v1", "other", "--strategy", "rebase"}, exitUsage, `error: --strategy: unknown update strategy "rebase"; want resource-merge, fast-forward, force-delete-replace or copy-merge` + "\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, _, errOut := runStrata(t, c.args...)
			if code != c.code || errOut != c.want {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, c.code, c.want)
			}
		})
	}
	os.WriteFile("web/Kptfile", []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream:\n  updateStrategy: rebase\n"), 0o644)
	code, _, errOut := runStrata(t, "pkg", "update", "web")
	if want := "error: web/Kptfile: upstream.updateStrategy: unknown update strategy \"rebase\"; want resource-merge, fast-forward, force-delete-replace or copy-merge\n"; code != exitRejected || errOut != want {
		t.Errorf("Kptfile strategy: exit %d, stderr %q; want 1, %q", code, errOut, want)
	}
}
