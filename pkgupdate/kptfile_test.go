package pkgupdate

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadev/strata/merge3"
)

func TestParseKptfileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "Kptfile: empty; want a kpt.dev/v1 Kptfile"},
		{"a: [", "Kptfile: yaml: line 1: did not find expected node content"},
		{"- 1", "Kptfile: not a mapping; want a kpt.dev/v1 Kptfile"},
		{"kind: Kptfile\n", "Kptfile: apiVersion: missing; want kpt.dev/v1"},
		{"apiVersion: kpt.dev/v1alpha2\nkind: Kptfile\n", `Kptfile: apiVersion: "kpt.dev/v1alpha2" is not supported; want kpt.dev/v1`},
		{"apiVersion: kpt.dev/v1\nkind: Pod\n", `Kptfile: kind: "Pod"; want Kptfile`},
		{"apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream:\n  git:\n    ref: [v1]\n", "Kptfile: upstream.git.ref: is a list; want a scalar"},
		{"apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream:\n  updateStrategy: rebase\n", `Kptfile: upstream.updateStrategy: unknown update strategy "rebase"`},
		{"apiVersion: kpt.dev/v1\nkind: Kptfile\npipeline:\n  mutators:\n  - image: a\n    selectors: {}\n", "Kptfile: pipeline.mutators[0].selectors: is a mapping; want a list"},
		{"apiVersion: kpt.dev/v1\nkind: Kptfile\ninfo: {}\ninfo: {}\n", "Kptfile: info: appears twice"},
		{"apiVersion: kpt.dev/v1\nkind: Kptfile\n---\na: 1\n", "Kptfile: holds more than one YAML document"},
	} {
		_, err := ParseKptfile("Kptfile", []byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseKptfile(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestKptfileSettersKeepCommentsAndOrder(t *testing.T) {
	in := "# top\napiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a # name\nupstream:\n  # how to update\n  type: git\n  git:\n    repo: r\n    extra: 1 # unknown\n    ref: v1\n  updateStrategy: fast-forward\ninfo: {}\n"
	kf, err := ParseKptfile("Kptfile", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	up := kf.Upstream()
	up.Git.Ref = "v2"
	kf.SetUpstream(*up)
	kf.SetUpstreamLock(GitLock{Git: up.Git, Commit: "abc"})
	got, _ := kf.Bytes()
	want := "# top\napiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a # name\nupstream:\n  # how to update\n  type: git\n  git:\n    repo: r\n    extra: 1 # unknown\n    ref: v2\n  updateStrategy: fast-forward\n" +
		"upstreamLock:\n  type: git\n  git:\n    repo: r\n    ref: v2\n    commit: abc\ninfo: {}\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestUpdateBadInput(t *testing.T) {
	r, pkg := twoVersions(t)
	kfText := readFile(t, filepath.Join(pkg, KptfileName))
	for _, c := range []struct {
		name  string
		files map[string]string
		opts  UpdateOptions
		want  string
	}{
		{"malformed Kptfile", map[string]string{KptfileName: "apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream: 3\n"}, UpdateOptions{}, "Kptfile: upstream: is a scalar; want a mapping"},
		{"unknown strategy in the Kptfile", map[string]string{KptfileName: strings.Replace(kfText, "resource-merge", "rebase", 1)}, UpdateOptions{}, `Kptfile: upstream.updateStrategy: unknown update strategy "rebase"`},
		{"missing ref", map[string]string{KptfileName: strings.Replace(kfText, "    ref: v1\n  updateStrategy", "  updateStrategy", 1)}, UpdateOptions{}, "Kptfile: upstream.git.ref: missing"},
		{"ref not found", nil, UpdateOptions{Ref: "v9"}, `: ref "v9": no branch, tag or commit of that name`},
		{"not a git repository", map[string]string{KptfileName: strings.ReplaceAll(kfText, "repo: "+r.dir, "repo: "+t.TempDir())}, UpdateOptions{}, ": not a git repository"},
		{"YAML that is not KRM", map[string]string{"bad.yaml": "just: [a, list\n"}, UpdateOptions{Ref: "v2"}, "bad.yaml"},
		{"one identity twice", map[string]string{"copy.yaml": deployment("web", "nginx:9", 1)}, UpdateOptions{Ref: "v2"}, "same identity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, pkg := twoVersions(t)
			writeFiles(t, pkg, c.files)
			before := snapshot(t, pkg)
			c.opts.Dir = pkg
			_, err := Update(context.Background(), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			sameSnapshot(t, before, snapshot(t, pkg))
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(pkg), ".*strata*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
	if _, err := Update(context.Background(), UpdateOptions{Dir: t.TempDir()}); err == nil || !strings.HasSuffix(err.Error(), "Kptfile: no Kptfile; not a kpt package") {
		t.Errorf("no Kptfile: %v", err)
	}
	var ce *merge3.ConflictsError
	_ = errors.As(nil, &ce)
}

func FuzzReadKptfile(f *testing.F) {
	f.Add([]byte(webKptfile))
	f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream:\n  git: &a {repo: r}\nupstreamLock:\n  git: *a\n"))
	f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nupstream: ~\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kf, err := ParseKptfile("Kptfile", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Kptfile: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		up := kf.Upstream()
		if up == nil {
			up = &Upstream{Type: OriginGit}
		}
		up.Git.Ref = "fuzz"
		kf.SetUpstream(*up)
		kf.SetUpstreamLock(GitLock{Git: up.Git, Commit: "c0ffee"})
		kf.SetName("n")
		out, err := kf.Bytes()
		if err != nil {
			return // yaml.v3 cannot write every tree it reads
		}
		again, err := ParseKptfile("Kptfile", out)
		if err != nil {
			t.Fatalf("written Kptfile does not parse: %v\n%s", err, out)
		}
		if again.UpstreamLock().Commit != "c0ffee" || again.Upstream().Git.Ref != "fuzz" || again.Name() != "n" {
			t.Fatalf("fields lost:\n%s", out)
		}
		out2, _ := again.Bytes()
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n---\n%s", out, out2)
		}
	})
}
