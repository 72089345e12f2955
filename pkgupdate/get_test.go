package pkgupdate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGetAtBranchTagAndCommit(t *testing.T) {
	r := newUpstream(t)
	c1 := r.commit(map[string]string{"web/Kptfile": webKptfile, "web/deploy.yaml": deployment("web", "nginx:1", 1)}, "v1")
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:2", 1)})
	git(t, r.dir, "branch", "stable", c1)
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:3", 1)})
	for _, c := range []struct{ ref, image, lockRef string }{
		{"v1", "nginx:1", "v1"},
		{"stable", "nginx:1", "stable"},
		{c1, "nginx:1", c1},
		{"main", "nginx:3", "main"},
		{"", "nginx:3", "main"}, // the default branch
	} {
		t.Run(c.ref, func(t *testing.T) {
			spec := r.dir + "/web"
			if c.ref != "" {
				spec += "@" + c.ref
			}
			dest := get(t, spec, "mine")
			if got := readFile(t, filepath.Join(dest, "deploy.yaml")); !strings.Contains(got, c.image) {
				t.Errorf("deploy.yaml at %s lacks %s:\n%s", c.ref, c.image, got)
			}
			if !strings.Contains(readFile(t, filepath.Join(dest, "deploy.yaml")), "# kpt-merge: /web") {
				t.Errorf("no rename-tracking comment")
			}
			kf, err := ReadKptfile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if kf.Name() != "mine" {
				t.Errorf("name %q, want mine", kf.Name())
			}
			up, lock := kf.Upstream(), kf.UpstreamLock()
			wantRef := c.ref
			if wantRef == "" {
				wantRef = "main"
			}
			if up.Git != (Git{Repo: r.dir, Directory: "/web", Ref: wantRef}) || up.UpdateStrategy != ResourceMerge {
				t.Errorf("upstream %+v", up)
			}
			want := git(t, r.dir, "rev-parse", wantRef+"^{commit}")
			if lock.Commit != want || lock.Ref != c.lockRef {
				t.Errorf("upstreamLock %+v, want commit %s ref %s", lock, want, c.lockRef)
			}
		})
	}
}

// TestGetStrategy: the strategy given to get is the Kptfile's
// upstream.updateStrategy, as kpt pkg get --strategy writes it; an unknown
// one is refused before anything is fetched.
func TestGetStrategy(t *testing.T) {
	r := newUpstream(t)
	r.commit(map[string]string{"web/Kptfile": webKptfile, "web/deploy.yaml": deployment("web", "nginx:1", 1)}, "v1")
	s, err := ParseSpec(r.dir + "/web@v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		strategy Strategy
		want     Strategy
		err      string
	}{
		{"", ResourceMerge, ""},
		{FastForward, FastForward, ""},
		{ForceDeleteReplace, ForceDeleteReplace, ""},
		{"newest", "", `unknown update strategy "newest"; want resource-merge, fast-forward, force-delete-replace or copy-merge`},
	} {
		t.Run(string(c.strategy), func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "mine")
			_, err := Get(context.Background(), GetOptions{Spec: s, Dest: dest, Strategy: c.strategy})
			if c.err != "" {
				if err == nil || err.Error() != c.err || exists(dest) {
					t.Fatalf("error %v, want %q and nothing written", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kf, err := ReadKptfile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if got := kf.Upstream().UpdateStrategy; got != c.want {
				t.Errorf("updateStrategy %q, want %q", got, c.want)
			}
		})
	}
}

// The golden Kptfile shows what get writes: upstream's comments, key order
// and unknown fields kept, name, upstream and upstreamLock set where kpt
// puts them.
func TestGetKptfileGolden(t *testing.T) {
	r := newUpstream(t)
	commit := r.commit(map[string]string{"web/Kptfile": webKptfile, "web/deploy.yaml": deployment("web", "nginx:1", 1)}, "v1")
	dest := get(t, r.dir+"/web@v1", "mine")
	got := strings.ReplaceAll(readFile(t, filepath.Join(dest, KptfileName)), r.dir, "REPO")
	got = strings.ReplaceAll(got, commit, "COMMIT")
	golden := filepath.Join("testdata", "get-kptfile.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(got), 0o644)
	}
	if want := readFile(t, golden); got != want {
		t.Errorf("Kptfile\n%s\nwant\n%s", got, want)
	}
}

func TestGetWithoutKptfileCreatesOne(t *testing.T) {
	r := newUpstream(t)
	r.commit(map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"})
	dest := get(t, "file://"+r.dir, "pkg")
	kf, err := ReadKptfile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if kf.Name() != "pkg" || kf.Upstream().Git.Directory != "/" || kf.Upstream().Git.Repo != "file://"+r.dir {
		t.Errorf("Kptfile:\n%s", readFile(t, filepath.Join(dest, KptfileName)))
	}
}

func TestGetFetchesUnfetchedNestedPackages(t *testing.T) {
	other := newUpstream(t)
	other.commit(map[string]string{"db/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n", "db/db.yaml": deployment("db", "postgres:16", 1)}, "db-v1")
	r := newUpstream(t)
	r.commit(map[string]string{
		"app/Kptfile": webKptfile,
		"app/db/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\nupstream:\n  type: git\n  git:\n    repo: " + other.dir +
			"\n    directory: /db\n    ref: db-v1\n",
		"app/local/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: local\n",
		"app/local/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
	})
	dest := get(t, r.dir+"/app", "app")
	if !strings.Contains(readFile(t, filepath.Join(dest, "db", "db.yaml")), "postgres:16") {
		t.Error("nested package not fetched")
	}
	kf, err := ReadKptfile(filepath.Join(dest, "db"))
	if err != nil {
		t.Fatal(err)
	}
	if kf.UpstreamLock() == nil || kf.UpstreamLock().Ref != "db-v1" {
		t.Errorf("nested Kptfile:\n%s", readFile(t, filepath.Join(dest, "db", KptfileName)))
	}
	if !exists(filepath.Join(dest, "local", "cm.yaml")) {
		t.Error("local subpackage not copied")
	}
}

func TestGetPackageTag(t *testing.T) {
	r := newUpstream(t)
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:1", 1)}, "web/v1")
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:2", 1)}, "v1")
	dest := get(t, r.dir+"/web@v1", "web")
	if !strings.Contains(readFile(t, filepath.Join(dest, "deploy.yaml")), "nginx:1") {
		t.Error("kpt's package tag web/v1 not preferred over v1")
	}
	kf, _ := ReadKptfile(dest)
	if kf.UpstreamLock().Ref != "web/v1" || kf.Upstream().Git.Ref != "v1" {
		t.Errorf("Kptfile:\n%s", readFile(t, filepath.Join(dest, KptfileName)))
	}
}

func TestGetBadInput(t *testing.T) {
	r := newUpstream(t)
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:1", 1), "bad/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream: [1]\n"}, "v1")
	notGit := t.TempDir()
	nonEmpty := t.TempDir()
	writeFiles(t, nonEmpty, map[string]string{"x": "x"})
	cases := []struct {
		spec, dest string
		want       string
		is         error
	}{
		{notGit + "/pkg@main", "", notGit + "/pkg: not a git repository", ErrNotGitRepo},
		{r.dir + "/web@nope", "", r.dir + `: ref "nope": no branch, tag or commit of that name`, ErrRefNotFound},
		{r.dir + "/missing@v1", "", `directory "/missing"`, ErrNoDirectory},
		{r.dir + "/web@v1", nonEmpty, nonEmpty + ": already exists and is not empty", nil},
		{r.dir + "/bad@v1", "", r.dir + "/bad/Kptfile@v1: upstream: is a list; want a mapping", nil},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			s, err := ParseSpec(c.spec)
			dest := c.dest
			if dest == "" {
				dest = filepath.Join(t.TempDir(), "out")
			}
			if err == nil {
				_, err = Get(context.Background(), GetOptions{Spec: s, Dest: dest})
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if c.dest == "" && exists(dest) {
				t.Error("destination written")
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".*strata*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want Spec
	}{
		{"https://github.com/kptdev/kpt.git/package-examples/wordpress@v0.9", Spec{"https://github.com/kptdev/kpt", "/package-examples/wordpress", "v0.9"}},
		{"https://host/org/repo.git@main", Spec{"https://host/org/repo", "/", "main"}},
		{"https://host/org/repo.git", Spec{"https://host/org/repo", "/", ""}},
		{"https://github.com/org/repo/a/b@feature/x", Spec{"https://github.com/org/repo", "/a/b", "feature/x"}},
		{"git@github.com:org/repo.git/dir@v1", Spec{"git@github.com:org/repo", "/dir", "v1"}},
		{"ssh://git@host/org/repo.git/dir", Spec{"ssh://git@host/org/repo", "/dir", ""}},
		// GitHub's page of a directory, as kpt accepts it.
		{"https://github.com/kptdev/kpt/tree/main/package-examples/wordpress", Spec{"https://github.com/kptdev/kpt", "/package-examples/wordpress", "main"}},
		{"https://github.com/org/repo/tree/v1.2", Spec{"https://github.com/org/repo", "/", "v1.2"}},
		{"https://github.com/org/repo/tree/v1/", Spec{"https://github.com/org/repo", "/", "v1"}},
	} {
		got, err := ParseSpec(c.arg)
		if err != nil || got != c.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", c.arg, got, err, c.want)
		}
	}
	for arg, want := range map[string]string{
		"https://example.com/org/repo/dir":             "https://example.com/org/repo/dir: cannot tell the repository from the directory; end the repository with .git (https://host/org/repo.git/DIR@REF)",
		"https://github.com/org/repo/tree":             "https://github.com/org/repo/tree: no ref after /tree/ (https://github.com/ORG/REPO/tree/REF/DIR)",
		"https://github.com/org/repo/tree/main/dir@v2": `https://github.com/org/repo/tree/main/dir@v2: two refs: "main" in the /tree/ path and "v2" after @`,
	} {
		if _, err := ParseSpec(arg); err == nil || err.Error() != want {
			t.Errorf("ParseSpec(%q): error %v, want %q", arg, err, want)
		}
	}
}
