package pkgupdate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// KptfileName is the name of a package's Kptfile.
const KptfileName = "Kptfile"

// The Kptfile's apiVersion and kind.
const (
	KptfileAPIVersion = "kpt.dev/v1"
	KptfileKind       = "Kptfile"
)

// OriginGit is the only upstream type: a git repository.
const OriginGit = "git"

// Kptfile is a package's Kptfile, kept as its YAML node tree so that writing
// it back keeps comments, key order and fields strata does not know.
type Kptfile struct {
	// File is where the Kptfile was read from, as errors name it.
	File string
	doc  *yaml.Node // the document node
}

// Git locates a package in a git repository (upstream.git).
type Git struct {
	Repo      string // the repository, a URL or a local path
	Directory string // the package's directory in the repository, "/" for the root
	Ref       string // a branch, tag or commit
}

// Upstream is the Kptfile's upstream section.
type Upstream struct {
	Type           string // "git"
	Git            Git
	UpdateStrategy Strategy
}

// GitLock is the resolved locator of the last fetch (upstreamLock.git).
type GitLock struct {
	Git
	Commit string // the commit fetched
}

// FieldError is a Kptfile problem at one field.
type FieldError struct {
	File string // the Kptfile
	Path string // the field, "upstream.git.ref"; empty for the whole file
	Msg  string
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Path, e.Msg)
}

// NewKptfile returns the minimal Kptfile kpt writes for a package that has
// none: apiVersion, kind and metadata.name.
func NewKptfile(file, name string) *Kptfile {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	setString(root, "apiVersion", KptfileAPIVersion)
	setString(root, "kind", KptfileKind)
	setString(mapChild(root, "metadata"), "name", name)
	return &Kptfile{File: file, doc: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}}
}

// ReadKptfile reads and checks the Kptfile of the package in dir. A missing
// Kptfile is an error wrapping fs.ErrNotExist.
func ReadKptfile(dir string) (*Kptfile, error) {
	file := filepath.Join(dir, KptfileName)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseKptfile(file, data)
}

// ParseKptfile parses and checks a Kptfile's text; file names it in errors.
func ParseKptfile(file string, data []byte) (*Kptfile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{File: file, Msg: "empty; want a kpt.dev/v1 Kptfile"}
		}
		return nil, &FieldError{File: file, Msg: err.Error()}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &FieldError{File: file, Msg: "holds more than one YAML document"}
	}
	budget := maxKptfileNodes
	if err := expandAliases(&doc, &budget); err != nil {
		return nil, &FieldError{File: file, Msg: err.Error()}
	}
	k := &Kptfile{File: file, doc: &doc}
	if err := k.check(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Kptfile) root() *yaml.Node { return k.doc.Content[0] }

// maxKptfileNodes bounds a Kptfile's size with its aliases expanded.
const maxKptfileNodes = 100000

// expandAliases replaces every alias with a copy of the node it names and
// drops anchors, so that editing one field of the Kptfile can never leave an
// alias pointing at an anchor that is gone. budget bounds the expansion (an
// alias bomb is an error, not an exhausted machine).
func expandAliases(n *yaml.Node, budget *int) error {
	if *budget--; *budget < 0 {
		return fmt.Errorf("more than %d nodes once its aliases are expanded", maxKptfileNodes)
	}
	n.Anchor = ""
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			if c.Alias == nil {
				return fmt.Errorf("alias *%s names no anchor", c.Value)
			}
			n.Content[i] = copyNode(c.Alias)
		}
		if err := expandAliases(n.Content[i], budget); err != nil {
			return err
		}
	}
	return nil
}

// copyNode copies a node tree, keeping aliases as aliases (expandAliases
// expands them in the copy).
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = copyNode(ch)
	}
	return &c
}

// Name returns metadata.name.
func (k *Kptfile) Name() string { return mapString(k.root(), "metadata", "name") }

// SetName sets metadata.name.
func (k *Kptfile) SetName(name string) {
	setString(mapChild(k.root(), "metadata", "kind"), "name", name)
}

// Upstream returns the upstream section, or nil when there is none.
func (k *Kptfile) Upstream() *Upstream {
	u := mapGet(k.root(), "upstream")
	if isNull(u) {
		return nil
	}
	return &Upstream{
		Type:           mapString(u, "type"),
		Git:            readGit(mapGet(u, "git")),
		UpdateStrategy: Strategy(mapString(u, "updateStrategy")),
	}
}

// UpstreamLock returns upstreamLock.git, or nil when there is none.
func (k *Kptfile) UpstreamLock() *GitLock {
	l := mapGet(k.root(), "upstreamLock")
	if isNull(l) {
		return nil
	}
	g := mapGet(l, "git")
	return &GitLock{Git: readGit(g), Commit: mapString(g, "commit")}
}

func readGit(g *yaml.Node) Git {
	return Git{Repo: mapString(g, "repo"), Directory: mapString(g, "directory"), Ref: mapString(g, "ref")}
}

// SetUpstream writes the upstream section field by field, so comments and
// unknown fields in it stay; empty fields are removed.
func (k *Kptfile) SetUpstream(u Upstream) {
	m := mapChild(k.root(), "upstream", "apiVersion", "kind", "metadata")
	setString(m, "type", u.Type)
	writeGit(mapChild(m, "git", "type"), u.Git)
	setString(m, "updateStrategy", string(u.UpdateStrategy), "type", "git")
}

// SetUpstreamLock writes the upstreamLock section (type git) field by field.
func (k *Kptfile) SetUpstreamLock(l GitLock) {
	m := mapChild(k.root(), "upstreamLock", "apiVersion", "kind", "metadata", "upstream")
	setString(m, "type", OriginGit)
	g := mapChild(m, "git", "type")
	writeGit(g, l.Git)
	setString(g, "commit", l.Commit, "repo", "directory", "ref")
}

func writeGit(g *yaml.Node, v Git) {
	setString(g, "repo", v.Repo)
	setString(g, "directory", v.Directory, "repo")
	setString(g, "ref", v.Ref, "repo", "directory")
}

// Bytes returns the Kptfile as YAML, indented as kpt writes it.
func (k *Kptfile) Bytes() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(k.doc); err != nil {
		return nil, fmt.Errorf("%s: encoding: %w", k.File, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: encoding: %w", k.File, err)
	}
	return buf.Bytes(), nil
}

// WriteFile writes the Kptfile into the package directory dir.
func (k *Kptfile) WriteFile(dir string) error {
	data, err := k.Bytes()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, KptfileName), data, 0o644); err != nil {
		return fmt.Errorf("writing the Kptfile: %w", err)
	}
	return nil
}
