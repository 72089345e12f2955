package merge3

import "testing"

func TestMergeLines(t *testing.T) {
	const o = "# web\n\nintro\n\n## Use\nrun it\n"
	cases := []struct {
		name, u, l, want string
		conflicts        int
	}{
		{"both edit different lines", "# web\n\nintro, updated\n\n## Use\nrun it\n", "# web\n\nintro\n\n## Use\nrun it our way\n",
			"# web\n\nintro, updated\n\n## Use\nrun it our way\n", 0},
		{"both append differently at the end", o + "upstream\n", o + "local\n", o + "upstream\n", 1},
		{"same edit on both sides", "# WEB\n\nintro\n\n## Use\nrun it\n", "# WEB\n\nintro\n\n## Use\nrun it\n", "# WEB\n\nintro\n\n## Use\nrun it\n", 0},
		{"upstream deletes a line local kept", "# web\n\n## Use\nrun it\n", o + "local\n", "# web\n\n## Use\nrun it\nlocal\n", 0},
		{"both edit one line", "# web\n\nintro A\n\n## Use\nrun it\n", "# web\n\nintro B\n\n## Use\nrun it\n", "# web\n\nintro A\n\n## Use\nrun it\n", 1},
		{"no final newline", "a\nb", "a\nb\nc", "a\nb\nc", 0},
	}
	for _, c := range cases {
		oo := o
		if c.name == "no final newline" {
			oo = "a\nb"
		}
		got, conflicts, ok := mergeLines([]byte(oo), []byte(c.u), []byte(c.l), true)
		if !ok || string(got) != c.want || len(conflicts) != c.conflicts {
			t.Errorf("%s: got %q with %d conflicts (ok %v), want %q with %d", c.name, got, len(conflicts), ok, c.want, c.conflicts)
		}
	}
	if _, conflicts, _ := mergeLines([]byte(o), []byte("# web\n\nintro A\n\n## Use\nrun it\n"), []byte("# web\n\nintro B\n\n## Use\nrun it\n"), true); len(conflicts) == 1 {
		if got := describeLines(conflicts[0]); got != "line 3" {
			t.Errorf("conflict names %q, want line 3", got)
		}
	}
}
