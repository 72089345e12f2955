package merge3

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fileStyle is how a file indents: the width of one level, and whether list
// items sit at their parent key's column ("compact") or one level in.
type fileStyle struct {
	indent  int
	compact bool
}

// detectStyle reads a YAML file's indentation from its lines; a file with no
// nesting gets two spaces and indented lists.
func detectStyle(data []byte) fileStyle {
	st := fileStyle{indent: 0}
	prevKey := -1
	compactSeen := false
	decided := false
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "---") {
			continue
		}
		ind := len(line) - len(trimmed)
		if ind > 0 && (st.indent == 0 || ind < st.indent) && !strings.HasPrefix(trimmed, "- ") {
			st.indent = ind
		}
		if (strings.HasPrefix(trimmed, "- ") || trimmed == "-") && prevKey >= 0 && !decided {
			compactSeen, decided = ind == prevKey, true
		}
		if strings.HasSuffix(strings.TrimRight(trimmed, " "), ":") {
			prevKey = ind
		} else {
			prevKey = -1
		}
	}
	if st.indent == 0 {
		st.indent = 2
	}
	st.compact = compactSeen
	return st
}

// encodeDocs writes documents the way the style file is formatted.
func encodeDocs(docs []*yaml.Node, style *pkgFile) ([]byte, error) {
	st := fileStyle{indent: 2}
	if style != nil {
		st = detectStyle(style.data)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(st.indent)
	if st.compact {
		enc.CompactSeqIndent()
	}
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Annotate adds kpt's rename-tracking marks — the
// internal.kpt.dev/upstream-identifier annotation and the
// "metadata: # kpt-merge: ns/name" comment — to every resource of the package
// in dir that lacks them, as `kpt pkg get` does, so that a resource local
// renames is still matched with its upstream version. Files with nothing to
// add are left as they are.
func Annotate(dir string, opts Options) error {
	p, err := readDir(dir, opts.SkipDir)
	if err != nil {
		return err
	}
	for _, f := range p.files {
		if !f.krm {
			continue
		}
		changed := false
		for _, doc := range f.docs {
			if scalar(lookup(doc.Content[0], "kind")) != "Kptfile" && annotate(doc.Content[0]) {
				changed = true
			}
		}
		if !changed {
			continue
		}
		data, err := encodeDocs(f.docs, f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f.rel)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
