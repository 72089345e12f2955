package merge3

import (
	"bytes"
	"testing"
)

// FuzzFiles merges arbitrary inputs: never a panic, inputs unchanged, and
// merging a file with itself on all three sides gives it back unchanged.
func FuzzFiles(f *testing.F) {
	f.Add([]byte(deployment), []byte(deployment), []byte(deployment))
	f.Add(deploy("1", "a"), deploy("2", "b"), deploy("3", "a"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), []byte("{"), []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: {name: k}\npipeline: {mutators: [{image: a:1}, {image: b}]}\n"))
	f.Fuzz(func(t *testing.T, o, u, l []byte) {
		oc, uc, lc := bytes.Clone(o), bytes.Clone(u), bytes.Clone(l)
		_, _, _ = Files("f.yaml", o, u, l, Options{})
		if !bytes.Equal(o, oc) || !bytes.Equal(u, uc) || !bytes.Equal(l, lc) {
			t.Fatal("an input was modified")
		}
		out, report, err := Files("f.yaml", l, l, l, Options{})
		if err == nil && (!bytes.Equal(out, l) || len(report.Conflicts) > 0) {
			t.Fatalf("merging a file with itself changed it:\n%q\n->\n%q", l, out)
		}
	})
}
