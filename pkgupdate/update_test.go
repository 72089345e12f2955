package pkgupdate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadev/strata/merge3"
)

// twoVersions commits v1 and v2 of a package "web" and fetches v1.
func twoVersions(t *testing.T) (*upstreamRepo, string) {
	r := newUpstream(t)
	r.commit(map[string]string{
		"web/Kptfile":     webKptfile,
		"web/deploy.yaml": deployment("web", "nginx:1", 1),
		"web/gone.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n",
		"web/README.md":   "v1\n",
	}, "v1")
	r.commit(map[string]string{
		"web/deploy.yaml": deployment("web", "nginx:2", 1),
		"web/gone.yaml":   "",
		"web/new.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n",
		"web/README.md":   "v2\n",
	}, "v2")
	return r, get(t, r.dir+"/web@v1", "web")
}

func update(t *testing.T, opts UpdateOptions) *UpdateResult {
	t.Helper()
	res, err := Update(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestUpdateResourceMerge(t *testing.T) {
	r, pkg := twoVersions(t)
	writeFiles(t, pkg, map[string]string{
		"deploy.yaml": strings.Replace(readFile(t, filepath.Join(pkg, "deploy.yaml")), "replicas: 1", "replicas: 5", 1),
		"mine.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n",
	})
	res := update(t, UpdateOptions{Dir: pkg, Ref: "v2"})
	got := readFile(t, filepath.Join(pkg, "deploy.yaml"))
	if !strings.Contains(got, "nginx:2") || !strings.Contains(got, "replicas: 5") {
		t.Errorf("deploy.yaml not merged:\n%s", got)
	}
	if exists(filepath.Join(pkg, "gone.yaml")) || !exists(filepath.Join(pkg, "new.yaml")) || !exists(filepath.Join(pkg, "mine.yaml")) {
		t.Errorf("files: %v", keys(snapshot(t, pkg)))
	}
	checkLock(t, pkg, r, "v2")
	if res.Ref != "v2" || len(res.Conflicts) != 0 {
		t.Errorf("result %+v", res)
	}
	kf := readFile(t, filepath.Join(pkg, KptfileName))
	if !strings.Contains(kf, "x-unknown: kept # a field kpt does not know") || !strings.HasPrefix(kf, "# the web package\n") {
		t.Errorf("Kptfile lost comments or fields:\n%s", kf)
	}
}

func checkLock(t *testing.T, pkg string, r *upstreamRepo, ref string) {
	t.Helper()
	kf, err := ReadKptfile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	want := git(t, r.dir, "rev-parse", ref+"^{commit}")
	if kf.UpstreamLock().Commit != want || kf.Upstream().Git.Ref != ref || kf.UpstreamLock().Ref != ref {
		t.Errorf("Kptfile after update to %s:\n%s", ref, readFile(t, filepath.Join(pkg, KptfileName)))
	}
}

func TestUpdateConflictReportedAndFail(t *testing.T) {
	_, pkg := twoVersions(t)
	writeFiles(t, pkg, map[string]string{
		"deploy.yaml": strings.Replace(readFile(t, filepath.Join(pkg, "deploy.yaml")), "nginx:1", "nginx:local", 1),
	})
	before := snapshot(t, pkg)
	_, err := Update(context.Background(), UpdateOptions{Dir: pkg, Ref: "v2", OnConflict: merge3.Fail})
	var ce *merge3.ConflictsError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 {
		t.Fatalf("error %v, want one conflict", err)
	}
	sameSnapshot(t, before, snapshot(t, pkg))
	res := update(t, UpdateOptions{Dir: pkg, Ref: "v2"})
	if len(res.Conflicts) != 1 || res.Conflicts[0].Taken != "upstream" || res.Conflicts[0].File != "deploy.yaml" {
		t.Errorf("conflicts %+v", res.Conflicts)
	}
	if !strings.Contains(readFile(t, filepath.Join(pkg, "deploy.yaml")), "nginx:2") {
		t.Error("upstream did not win")
	}
}

func TestUpdateFastForward(t *testing.T) {
	r, pkg := twoVersions(t)
	update(t, UpdateOptions{Dir: pkg, Ref: "v2", Strategy: FastForward})
	checkLock(t, pkg, r, "v2")
	if got := readFile(t, filepath.Join(pkg, "README.md")); got != "v2\n" {
		t.Errorf("README %q", got)
	}
}

func TestUpdateFastForwardRefusesLocalChanges(t *testing.T) {
	_, pkg := twoVersions(t)
	writeFiles(t, pkg, map[string]string{"README.md": "mine\n", "extra.txt": "x\n", "gone.yaml": ""})
	before := snapshot(t, pkg)
	_, err := Update(context.Background(), UpdateOptions{Dir: pkg, Ref: "v2", Strategy: FastForward})
	want := pkg + ": local package files have been modified: README.md, extra.txt, gone.yaml; use another --strategy"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	sameSnapshot(t, before, snapshot(t, pkg))
}

func TestUpdateForceDeleteReplace(t *testing.T) {
	r, pkg := twoVersions(t)
	writeFiles(t, pkg, map[string]string{"README.md": "mine\n", "extra.txt": "x\n"})
	update(t, UpdateOptions{Dir: pkg, Ref: "v2", Strategy: ForceDeleteReplace})
	checkLock(t, pkg, r, "v2")
	if exists(filepath.Join(pkg, "extra.txt")) || readFile(t, filepath.Join(pkg, "README.md")) != "v2\n" {
		t.Errorf("local changes survived: %v", keys(snapshot(t, pkg)))
	}
	if kf, _ := ReadKptfile(pkg); kf.Name() != "web" {
		t.Errorf("root Kptfile not kept: name %q", kf.Name())
	}
}

func TestUpdateCopyMerge(t *testing.T) {
	r, pkg := twoVersions(t)
	writeFiles(t, pkg, map[string]string{"README.md": "mine\n", "extra.txt": "x\n"})
	update(t, UpdateOptions{Dir: pkg, Ref: "v2", Strategy: CopyMerge})
	checkLock(t, pkg, r, "v2")
	if !exists(filepath.Join(pkg, "extra.txt")) || exists(filepath.Join(pkg, "gone.yaml")) || !exists(filepath.Join(pkg, "new.yaml")) {
		t.Errorf("files %v", keys(snapshot(t, pkg)))
	}
	if got := readFile(t, filepath.Join(pkg, "README.md")); got != "v2\n" {
		t.Errorf("README %q: upstream's copy should win", got)
	}
}

func TestUpdateStrategyFromKptfile(t *testing.T) {
	r, pkg := twoVersions(t)
	kf := strings.Replace(readFile(t, filepath.Join(pkg, KptfileName)), "updateStrategy: resource-merge", "updateStrategy: fast-forward", 1)
	writeFiles(t, pkg, map[string]string{KptfileName: kf, "README.md": "mine\n"})
	if _, err := Update(context.Background(), UpdateOptions{Dir: pkg, Ref: "v2"}); err == nil || !strings.Contains(err.Error(), "README.md") {
		t.Fatalf("fast-forward from the Kptfile not used: %v", err)
	}
	update(t, UpdateOptions{Dir: pkg, Ref: "v2", Strategy: ResourceMerge})
	checkLock(t, pkg, r, "v2")
}

func TestUpdateKeepsRefWithoutAt(t *testing.T) {
	r := newUpstream(t)
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:1", 1)})
	pkg := get(t, r.dir+"/web@main", "web")
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:2", 1)})
	update(t, UpdateOptions{Dir: pkg})
	checkLock(t, pkg, r, "main")
	if !strings.Contains(readFile(t, filepath.Join(pkg, "deploy.yaml")), "nginx:2") {
		t.Error("branch tip not taken")
	}
}

func TestUpdateRefusesDirtyTree(t *testing.T) {
	_, pkg := twoVersions(t)
	work := filepath.Dir(pkg)
	git(t, work, "init", "-q")
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "fork")
	writeFiles(t, pkg, map[string]string{"README.md": "edited\n"})
	before := snapshot(t, pkg)
	_, err := Update(context.Background(), UpdateOptions{Dir: pkg, Ref: "v2"})
	want := pkg + ": the package has uncommitted changes (web/README.md); commit them or pass --allow-dirty"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	sameSnapshot(t, before, snapshot(t, pkg))
	update(t, UpdateOptions{Dir: pkg, Ref: "v2", AllowDirty: true})
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "update")
	update(t, UpdateOptions{Dir: pkg, Ref: "v1"}) // clean: allowed
}
