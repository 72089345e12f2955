package pkgupdate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Spec is a parsed `REPO[/DIR][@REF]` argument of `pkg get`.
type Spec struct {
	Repo      string // a URL, or an absolute local path
	Directory string // "/" for the repository root, else "/a/b"
	Ref       string // "" for the default branch
}

// ParseSpec splits a `pkg get` argument the way kpt does: a ".git" in it
// ends the repository (and is dropped, as kpt drops it); on github.com the
// repository is the first two path elements; a local path or file:// URL
// without ".git" is split at the nearest enclosing git repository. The ref
// follows the last "@" of the path part.
func ParseSpec(arg string) (Spec, error) {
	if arg == "" {
		return Spec{}, fmt.Errorf("empty repository argument")
	}
	rest, ref := splitRef(arg)
	if ref == "" && strings.HasSuffix(rest, "@") {
		return Spec{}, fmt.Errorf("%s: empty ref after @", arg)
	}
	var s Spec
	var err error
	switch {
	case strings.Contains(rest, ".git"):
		s = splitDotGit(rest)
	case isURL(rest) && !strings.HasPrefix(rest, "file://"):
		s, err = splitHosted(arg, rest)
	default:
		s, err = splitLocal(rest)
	}
	if err != nil {
		return Spec{}, err
	}
	if s.Ref != "" && ref != "" {
		return Spec{}, fmt.Errorf("%s: two refs: %q in the /tree/ path and %q after @", arg, s.Ref, ref)
	}
	if ref != "" {
		s.Ref = ref
	}
	s.Directory = path.Clean("/" + s.Directory)
	if isLocal(s.Repo) && !strings.HasPrefix(s.Repo, "file://") {
		if s.Repo, err = filepath.Abs(s.Repo); err != nil {
			return Spec{}, fmt.Errorf("%s: %w", arg, err)
		}
	}
	return s, nil
}

func isURL(s string) bool { return strings.Contains(s, "://") }

// isLocal reports whether repo is a local path or file:// URL.
func isLocal(repo string) bool {
	return strings.HasPrefix(repo, "file://") || !isURL(repo) && !isSCP(repo)
}

// isSCP reports git's scp-like syntax, user@host:path.
func isSCP(s string) bool {
	colon := strings.Index(s, ":")
	return colon > 0 && !strings.Contains(s[:colon], "/") && !filepath.IsAbs(s)
}

// splitRef separates "@REF": the last "@" after the host part of a URL or
// the user part of an scp-like address.
func splitRef(arg string) (rest, ref string) {
	start := 0
	if i := strings.Index(arg, "://"); i >= 0 {
		start = i + 3
		if slash := strings.Index(arg[start:], "/"); slash >= 0 {
			start += slash
		}
	} else if isSCP(arg) {
		start = strings.Index(arg, ":")
	}
	at := strings.LastIndex(arg[start:], "@")
	if at < 0 {
		return arg, ""
	}
	return arg[:start+at], arg[start+at+1:]
}

func splitDotGit(s string) Spec {
	i := strings.Index(s, ".git")
	return Spec{Repo: strings.TrimSuffix(s[:i], "/"), Directory: s[i+len(".git"):]}
}

// splitHosted handles https URLs without ".git": only github.com's layout
// is known (owner/repo/dir..., or the web page of a directory,
// owner/repo/tree/REF/dir..., whose REF is one path element); others need the
// ".git" marker, as in kpt.
func splitHosted(arg, s string) (Spec, error) {
	scheme, rest, _ := strings.Cut(s, "://")
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if parts[0] != "github.com" || len(parts) < 3 {
		return Spec{}, fmt.Errorf("%s: cannot tell the repository from the directory; end the repository with .git (https://host/org/repo.git/DIR@REF)", arg)
	}
	repo := scheme + "://" + strings.Join(parts[:3], "/")
	if len(parts) > 3 && parts[3] == "tree" {
		if len(parts) < 5 || parts[4] == "" {
			return Spec{}, fmt.Errorf("%s: no ref after /tree/ (https://github.com/ORG/REPO/tree/REF/DIR)", arg)
		}
		return Spec{Repo: repo, Ref: parts[4], Directory: strings.Join(parts[5:], "/")}, nil
	}
	return Spec{Repo: repo, Directory: strings.Join(parts[3:], "/")}, nil
}

// splitLocal finds the git repository enclosing a local path: the nearest
// ancestor with a .git entry, or that is itself a bare repository.
func splitLocal(s string) (Spec, error) {
	prefix := ""
	p := s
	if after, ok := strings.CutPrefix(s, "file://"); ok {
		prefix, p = "file://", after
	}
	p = filepath.Clean(p)
	for cand := p; ; cand = filepath.Dir(cand) {
		if isRepoDir(cand) {
			rel, err := filepath.Rel(cand, p)
			if err != nil {
				return Spec{}, err
			}
			return Spec{Repo: prefix + cand, Directory: filepath.ToSlash(rel)}, nil
		}
		if parent := filepath.Dir(cand); parent == cand {
			break
		}
	}
	return Spec{}, fmt.Errorf("%s: %w", s, ErrNotGitRepo)
}

func isRepoDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// cleanDirectory writes a package directory as kpt does: slash-rooted.
func cleanDirectory(d string) string { return path.Clean("/" + d) }
