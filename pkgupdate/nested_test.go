package pkgupdate

import (
	"path/filepath"
	"strings"
	"testing"
)

const dbKptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\n"

// A parent package whose upstream adds, deletes and keeps nested packages,
// one of which has an upstream of its own.
func TestUpdateNestedPackages(t *testing.T) {
	db := newUpstream(t)
	db.commit(map[string]string{"db/Kptfile": dbKptfile, "db/db.yaml": deployment("db", "postgres:15", 1)}, "db-v1")
	db.commit(map[string]string{"db/db.yaml": deployment("db", "postgres:16", 1)}, "db-v2")
	nestedDB := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: db\nupstream:\n  type: git\n  git:\n    repo: " + db.dir + "\n    directory: /db\n    ref: db-v2\n"
	// Published the usual way: fetched (with upstreamLock) and committed.
	fetched := snapshot(t, get(t, db.dir+"/db@db-v1", "db"))
	sub := func(name string) map[string]string {
		files := map[string]string{}
		for f, c := range fetched {
			files["app/"+name+"/"+f] = c
		}
		return files
	}
	r := newUpstream(t)
	v1 := map[string]string{"app/Kptfile": webKptfile, "app/web.yaml": deployment("web", "nginx:1", 1)}
	for k, v := range sub("dropped") {
		v1[k] = v
	}
	for k, v := range sub("changed") {
		v1[k] = v
	}
	r.commit(v1, "v1")
	pkg := get(t, r.dir+"/app@v1", "app")
	if !exists(filepath.Join(pkg, "dropped", "db.yaml")) {
		t.Fatal("nested packages not fetched by get")
	}
	// Local edits one nested package; upstream deletes both and adds one
	// with its own upstream at db-v2.
	writeFiles(t, pkg, map[string]string{"changed/extra.txt": "local\n"})
	r.commit(map[string]string{"app/dropped": "", "app/changed": "", "app/db/Kptfile": nestedDB}, "v2")
	res := update(t, UpdateOptions{Dir: pkg, Ref: "v2"})
	if exists(filepath.Join(pkg, "dropped")) {
		t.Error("unchanged nested package deleted upstream was kept")
	}
	if !exists(filepath.Join(pkg, "changed", "extra.txt")) {
		t.Error("locally changed nested package deleted upstream was removed")
	}
	if got := readFile(t, filepath.Join(pkg, "db", "db.yaml")); !strings.Contains(got, "postgres:16") {
		t.Errorf("added nested package not fetched from its own upstream:\n%s", got)
	}
	notes := strings.Join(res.Notes, "\n")
	for _, want := range []string{"deleted nested package dropped", "kept nested package changed", "added nested package db"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	// The nested package's own upstream moves on; updating the parent
	// updates it too.
	db.commit(map[string]string{"db/db.yaml": deployment("db", "postgres:17", 1)}, "db-v3")
	writeFiles(t, pkg, map[string]string{"db/Kptfile": strings.Replace(readFile(t, filepath.Join(pkg, "db", KptfileName)), "ref: db-v2", "ref: db-v3", 1)})
	update(t, UpdateOptions{Dir: pkg})
	if got := readFile(t, filepath.Join(pkg, "db", "db.yaml")); !strings.Contains(got, "postgres:17") {
		t.Errorf("nested package not updated from its own upstream:\n%s\n%s", got, readFile(t, filepath.Join(pkg, "db", KptfileName)))
	}
}
