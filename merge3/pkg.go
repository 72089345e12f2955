package merge3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pkgFile is one file of a package.
type pkgFile struct {
	rel       string // slash-separated path inside the package
	data      []byte
	krm       bool // a YAML file of KRM resources (or a Kptfile)
	docs      []*yaml.Node
	resources []*resource // the resource of each document
}

// pkg is one version of a package: its files, and its resources by identity.
type pkg struct {
	files     []*pkgFile
	byRel     map[string]*pkgFile
	resources map[string]*resource
	order     []*resource // in file, then document order
}

func isKRMFile(rel string) bool {
	base := filepath.Base(rel)
	return base == "Kptfile" || strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")
}

// readDir reads a package directory; a missing directory is an empty package.
func readDir(root string, skip func(string) bool) (*pkg, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == root {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || (rel != "." && skip != nil && skip(rel)) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading package %s: %w", root, err)
	}
	return newPkg(files)
}

// newPkg parses a package's files, given by relative path.
func newPkg(files map[string][]byte) (*pkg, error) {
	p := &pkg{byRel: map[string]*pkgFile{}, resources: map[string]*resource{}}
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		f := &pkgFile{rel: rel, data: files[rel], krm: isKRMFile(rel)}
		if f.krm {
			if err := p.parse(f); err != nil {
				return nil, err
			}
		}
		p.files = append(p.files, f)
		p.byRel[rel] = f
	}
	return p, nil
}

// parse reads a KRM file's documents and indexes its resources. A YAML file
// with a document that is not a resource (values.yaml, a kustomization.yaml
// without apiVersion) is not KRM: it is merged as a data file, by path.
func (p *pkg) parse(f *pkgFile) error {
	docs, err := decodeDocs(f.data)
	if err != nil {
		return fmt.Errorf("%s: %w", f.rel, err)
	}
	for _, doc := range docs {
		if !isResource(doc.Content[0]) {
			f.krm = false
			return nil
		}
	}
	for i, doc := range docs {
		node := doc.Content[0]
		if err := checkKeys(node, ""); err != nil {
			return fmt.Errorf("%s: document %d: %w", f.rel, i+1, err)
		}
		f.docs = append(f.docs, doc)
		r := &resource{file: f, doc: doc, node: node, id: originIdentity(node)}
		_, r.title = identity(node)
		if scalar(lookup(node, "kind")) == "Kptfile" {
			r.id = "kpt.dev|Kptfile|" + filepath.ToSlash(filepath.Dir(f.rel))
		}
		if prev, dup := p.resources[r.id]; dup {
			return fmt.Errorf("%s: %s has the same identity as a resource in %s", f.rel, r.title, prev.file.rel)
		}
		p.resources[r.id] = r
		p.order = append(p.order, r)
		f.resources = append(f.resources, r)
	}
	return nil
}

// decodeDocs reads the non-empty documents of a YAML file.
func decodeDocs(data []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		if len(doc.Content) > 0 {
			docs = append(docs, &doc)
		}
	}
}

// isResource reports whether a document's root is a KRM resource: a map
// with apiVersion and kind.
func isResource(node *yaml.Node) bool {
	return node.Kind == yaml.MappingNode && scalar(lookup(node, "apiVersion")) != "" && scalar(lookup(node, "kind")) != ""
}

// checkKeys rejects a map naming one key twice, which YAML forbids and which
// would make the merge ambiguous.
func checkKeys(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.MappingNode:
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if seen[key] {
				return fmt.Errorf("%s: key %q appears twice", strings.TrimPrefix(path+"."+key, "."), key)
			}
			seen[key] = true
			if err := checkKeys(n.Content[i+1], path+"."+key); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := checkKeys(item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
