package pkgupdate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir with a fixed identity, failing the test on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "user.name=strata test", "-c", "user.email=test@strata.invalid",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// writeFiles writes files (slash paths → content; "" deletes) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// upstreamRepo is a git repository the test commits package versions to.
type upstreamRepo struct {
	t   testing.TB
	dir string
}

func newUpstream(t testing.TB) *upstreamRepo {
	dir := filepath.Join(t.TempDir(), "upstream")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	return &upstreamRepo{t: t, dir: dir}
}

// commit writes files, commits them and returns the commit; tags are
// added when given.
func (r *upstreamRepo) commit(files map[string]string, tags ...string) string {
	writeFiles(r.t, r.dir, files)
	git(r.t, r.dir, "add", "-A")
	git(r.t, r.dir, "commit", "-q", "--allow-empty", "-m", "change")
	for _, tag := range tags {
		git(r.t, r.dir, "tag", tag)
	}
	return git(r.t, r.dir, "rev-parse", "HEAD")
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// snapshot returns every file under dir with its content, to compare
// a package before and after a refused update.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	files, err := listFiles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := map[string]string{}
	for _, f := range files {
		snap[f] = readFile(t, filepath.Join(dir, f))
	}
	return snap
}

func sameSnapshot(t testing.TB, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("files changed: before %v, after %v", keys(before), keys(after))
	}
	for f, c := range before {
		if after[f] != c {
			t.Fatalf("%s changed:\n%s\n---\n%s", f, c, after[f])
		}
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// get fetches spec into a new directory under a temp dir.
func get(t testing.TB, spec, name string) string {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), name)
	if _, err := Get(context.Background(), GetOptions{Spec: s, Dest: dest}); err != nil {
		t.Fatal(err)
	}
	return dest
}

func deployment(name, image string, replicas int) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name +
		"\nspec:\n  replicas: " + string(rune('0'+replicas)) +
		"\n  template:\n    spec:\n      containers:\n      - name: app\n        image: " + image + "\n"
}

const webKptfile = `# the web package
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: web # upstream's name
info:
  description: web app
x-unknown: kept # a field kpt does not know
pipeline:
  mutators:
  - image: set-labels:v1
    configMap:
      app: web
`
