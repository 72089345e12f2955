package pkgupdate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDiff: pkg diff shows local changes against the upstream at the
// locked commit, nothing for an unchanged package, and upstream's own
// changes too when compared against a later ref.
func TestDiff(t *testing.T) {
	r := newUpstream(t)
	c1 := r.commit(map[string]string{"web/Kptfile": webKptfile, "web/deploy.yaml": deployment("web", "nginx:1", 1)}, "v1")
	r.commit(map[string]string{"web/deploy.yaml": deployment("web", "nginx:2", 1)}, "v2")
	dest := get(t, r.dir+"/web@v1", "mine")

	diff := func(ref string) (bool, string) {
		t.Helper()
		var out bytes.Buffer
		changed, err := Diff(context.Background(), DiffOptions{Dir: dest, Ref: ref}, &out)
		if err != nil {
			t.Fatal(err)
		}
		// The file times diff prints, and the package's temporary path.
		s := regexp.MustCompile(`(?m)^((?:---|\+\+\+) \S+)\t.*$`).ReplaceAllString(out.String(), "$1")
		return changed, s
	}
	if changed, out := diff(""); changed || out != "" {
		t.Errorf("unchanged package: %v, %q", changed, out)
	}

	deploy := filepath.Join(dest, "deploy.yaml")
	data := readFile(t, deploy)
	if err := os.WriteFile(deploy, bytes.Replace([]byte(data), []byte("replicas: 1"), []byte("replicas: 3"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "extra.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "diff -r -u -x .git upstream@" + c1[:12] + "/deploy.yaml " + deploy + "\n" +
		"--- upstream@" + c1[:12] + "/deploy.yaml\n" +
		"+++ " + deploy + "\n"
	changed, out := diff("")
	if !changed || len(out) < len(want) || out[:len(want)] != want {
		t.Fatalf("local changes: %v\n%s\nwant it to start with\n%s", changed, out, want)
	}
	for _, line := range []string{"\n-  replicas: 1\n", "\n+  replicas: 3\n", "\nOnly in " + dest + ": extra.yaml\n"} {
		if !bytes.Contains([]byte(out), []byte(line)) {
			t.Errorf("no %q in\n%s", line, out)
		}
	}
	if _, out := diff("v2"); !bytes.Contains([]byte(out), []byte("\n-        image: nginx:2\n+        image: nginx:1\n")) {
		t.Errorf("against v2: no image change in\n%s", out)
	}

	var sink bytes.Buffer
	empty := t.TempDir()
	wantErr := filepath.Join(empty, "Kptfile") + ": no Kptfile; not a kpt package"
	if _, err := Diff(context.Background(), DiffOptions{Dir: empty}, &sink); err == nil || err.Error() != wantErr {
		t.Errorf("no Kptfile: error %v, want %q", err, wantErr)
	}
}
