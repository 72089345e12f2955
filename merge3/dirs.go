package merge3

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/schema/builtin"
)

// ConflictsError stops a merge under the Fail policy.
type ConflictsError struct {
	Conflicts []Conflict
}

func (e *ConflictsError) Error() string {
	return fmt.Sprintf("%d conflict(s) between upstream and local changes; nothing was written", len(e.Conflicts))
}

// Dirs merges three versions of a package directory — original, upstream
// and local — into output, which must be empty or not exist. local is only
// read. Either original or upstream may be missing (an empty package).
func Dirs(original, upstream, local, output string, opts Options) (*Report, error) {
	var pkgs [3]*pkg
	for i, dir := range [3]string{original, upstream, local} {
		p, err := readDir(dir, opts.SkipDir)
		if err != nil {
			return nil, err
		}
		pkgs[i] = p
	}
	files, report, err := mergePackages(pkgs[0], pkgs[1], pkgs[2], opts)
	if err != nil {
		return report, err
	}
	return report, writeDir(output, files)
}

// Files merges three versions of one file of resources; name is the
// local file's name, used in reports.
func Files(name string, original, upstream, local []byte, opts Options) ([]byte, *Report, error) {
	var pkgs [3]*pkg
	for i, data := range [3][]byte{original, upstream, local} {
		files := map[string][]byte{}
		if data != nil {
			files[name] = data
		}
		p, err := newPkg(files)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", [3]string{"original", "upstream", "local"}[i], err)
		}
		pkgs[i] = p
	}
	files, report, err := mergePackages(pkgs[0], pkgs[1], pkgs[2], opts)
	if err != nil {
		return nil, report, err
	}
	var out []byte
	for _, f := range files {
		out = append(out, f.data...)
	}
	return out, report, nil
}

// outFile is one file of the merged package.
type outFile struct {
	rel     string
	data    []byte // when not changed: the bytes to write
	docs    []*yaml.Node
	changed bool
	style   *pkgFile // the file whose formatting a rewrite follows
}

// mergePackages merges the resources and files of three package versions.
func mergePackages(o, u, l *pkg, opts Options) ([]*outFile, *Report, error) {
	if opts.Schema == nil {
		opts.Schema = func(apiVersion, kind string) schema.Type {
			t, _ := builtin.ForKind(apiVersion, kind)
			return t
		}
	}
	b := &builder{o: o, u: u, l: l, opts: opts, report: &Report{}, out: map[string]*outFile{}}
	b.mergeLocalResources()
	b.addUpstreamResources()
	b.mergeTextFiles()
	if opts.OnConflict == Fail && len(b.report.Conflicts) > 0 {
		return nil, b.report, &ConflictsError{Conflicts: b.report.Conflicts}
	}
	files, err := b.render()
	return files, b.report, err
}

type builder struct {
	o, u, l *pkg
	opts    Options
	report  *Report
	out     map[string]*outFile
	order   []string // output files in the order they appear
}

func (b *builder) file(rel string, style *pkgFile) *outFile {
	f, ok := b.out[rel]
	if !ok {
		f = &outFile{rel: rel, style: style}
		b.out[rel] = f
		b.order = append(b.order, rel)
	}
	return f
}

// mergeLocalResources merges every local resource with its original and
// upstream versions, in local's file and document order.
func (b *builder) mergeLocalResources() {
	for _, lf := range b.l.files {
		if !lf.krm {
			continue
		}
		out := b.file(lf.rel, lf)
		out.data = lf.data
		for _, r := range lf.resources {
			b.mergeLocal(r, out)
		}
		if len(out.docs) != len(lf.docs) {
			out.changed = true
		}
	}
}

func (b *builder) mergeLocal(r *resource, out *outFile) {
	o, u := b.o.resources[r.id], b.u.resources[r.id]
	switch {
	case o == nil && u == nil: // local's own resource
		out.docs = append(out.docs, r.doc)
		return
	case o != nil && u == nil: // deleted upstream
		if sameResource(o.node, r.node) {
			out.changed = true
			return
		}
		b.report.KeptDeleted = append(b.report.KeptDeleted, r.file.rel+": "+r.title)
		out.docs = append(out.docs, r.doc)
		return
	}
	merged := b.mergeResource(o, u, r)
	target := out
	if o != nil && o.file.rel == r.file.rel && u.file.rel != o.file.rel {
		target = b.file(u.file.rel, u.file) // follow upstream's move
		out.changed = true
	}
	if !same(merged.Content[0], r.node) || target != out {
		target.changed = true
	}
	target.docs = append(target.docs, merged)
}

// mergeResource merges one resource's three versions into a new document.
func (b *builder) mergeResource(o, u, l *resource) *yaml.Node {
	m := &merger{opts: b.opts, report: b.report, file: l.file.rel, resource: l.title}
	var t schema.Type
	if scalar(lookup(l.node, "kind")) == "Kptfile" {
		m.listIdentity, m.localOnly = pipelineIdentity, kptfileIdentity
	} else {
		t = b.opts.Schema(scalar(lookup(l.node, "apiVersion")), scalar(lookup(l.node, "kind")))
	}
	var on *yaml.Node
	if o != nil {
		on = o.node
	}
	doc := *l.doc
	doc.Content = []*yaml.Node{m.value(on, u.node, l.node, schema.Field{Type: t})}
	return &doc
}

// addUpstreamResources adds what upstream added, into upstream's file, and
// reports upstream changes to resources local deleted (they stay deleted).
func (b *builder) addUpstreamResources() {
	matched := map[string]bool{}
	for _, r := range b.l.order {
		matched[r.id] = true
	}
	for _, u := range b.u.order {
		if matched[u.id] {
			continue
		}
		if o := b.o.resources[u.id]; o != nil {
			if !sameResource(o.node, u.node) {
				b.report.Conflicts = append(b.report.Conflicts, Conflict{File: u.file.rel, Resource: u.title,
					Upstream: "changed", Local: "deleted", Taken: string(KeepLocal)})
			}
			continue
		}
		out := b.file(u.file.rel, u.file)
		if _, inLocal := b.l.byRel[u.file.rel]; !inLocal && out.data == nil {
			out.style = u.file
		}
		out.docs = append(out.docs, u.doc)
		out.changed = true
	}
}

// mergeTextFiles merges files that hold no resources: the side that changed
// a file wins; when both changed it, a YAML file merges by document and key
// (mergeData), other files line by line, and what both changed differently
// is a conflict. A file upstream deleted and local changed is kept.
func (b *builder) mergeTextFiles() {
	done := map[string]bool{}
	for _, f := range append(append([]*pkgFile(nil), b.l.files...), b.u.files...) {
		if f.krm || done[f.rel] {
			continue
		}
		done[f.rel] = true
		if data, keep := b.mergeText(f.rel); keep {
			b.file(f.rel, nil).data = data
		}
	}
}

func (b *builder) mergeText(rel string) ([]byte, bool) {
	of, uf, lf := b.o.byRel[rel], b.u.byRel[rel], b.l.byRel[rel]
	o, u, l := fileData(of), fileData(uf), fileData(lf)
	switch {
	case bytes.Equal(u, o) && (uf == nil) == (of == nil):
		return l, lf != nil
	case bytes.Equal(l, o) && (lf == nil) == (of == nil):
		return u, uf != nil
	case bytes.Equal(u, l) && (uf == nil) == (lf == nil):
		return l, lf != nil
	}
	if of != nil && uf == nil && lf != nil {
		// Deleted upstream, changed locally: kept and reported, as a resource is.
		b.report.KeptDeleted = append(b.report.KeptDeleted, rel)
		return l, true
	}
	if of != nil && uf != nil && lf != nil && isKRMFile(rel) {
		if merged, ok := b.mergeData(rel, o, u, l, lf); ok {
			return merged, true
		}
	}
	if of != nil && uf != nil && lf != nil {
		takeUpstream := b.opts.OnConflict != KeepLocal
		if merged, conflicts, ok := mergeLines(o, u, l, takeUpstream); ok {
			for _, c := range conflicts {
				m := &merger{opts: b.opts, report: b.report, file: rel, path: []string{describeLines(c)}}
				m.conflict(textNode(c.upstream), textNode(c.local))
			}
			return merged, true
		}
	}
	m := &merger{opts: b.opts, report: b.report, file: rel}
	if m.conflict(fileNode(uf), fileNode(lf)) == TakeUpstream {
		return u, uf != nil
	}
	return l, lf != nil
}

func fileData(f *pkgFile) []byte {
	if f == nil {
		return nil
	}
	return f.data
}

// fileNode stands for a whole file in a conflict report.
func fileNode(f *pkgFile) *yaml.Node {
	if f == nil {
		return nil
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprintf("<%d bytes>", len(f.data))}
}

// textNode stands for lines of text in a conflict report.
func textNode(lines []byte) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(lines)}
}

// render produces the bytes of every output file, in a stable order.
func (b *builder) render() ([]*outFile, error) {
	var files []*outFile
	for _, rel := range b.order {
		f := b.out[rel]
		switch {
		case !f.changed: // untouched: its bytes as they were, even with no resource
		case len(f.docs) == 0:
			continue // every resource of the file is gone
		default:
			data, err := encodeDocs(f.docs, f.style)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			f.data = data
		}
		files = append(files, f)
	}
	return files, nil
}

// writeDir writes the merged files into output.
func writeDir(output string, files []*outFile) error {
	if entries, err := os.ReadDir(output); err == nil && len(entries) > 0 {
		return fmt.Errorf("output directory %s is not empty", output)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, f := range files {
		path := filepath.Join(output, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
