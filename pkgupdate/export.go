package pkgupdate

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrNoDirectory marks a package directory missing from a commit.
var ErrNoDirectory = errors.New("no such directory in the commit")

// Export writes the files of directory (relative to the repository root,
// "/" for the root) at commit into dest, an existing directory.
func (c *Clone) Export(ctx context.Context, commit, directory, dest string) error {
	treeish := commit + "^{tree}"
	if dir := strings.Trim(path.Clean("/"+directory), "/"); dir != "" {
		treeish = commit + ":" + dir
	}
	out, err := runGit(ctx, c.dir, "cat-file", "-t", treeish)
	if err != nil || strings.TrimSpace(string(out)) != "tree" {
		return fmt.Errorf("%s: directory %q at commit %s: %w", c.Repo, directory, commit, ErrNoDirectory)
	}
	tarball, err := runGit(ctx, c.dir, "archive", "--format=tar", treeish)
	if err != nil {
		return fmt.Errorf("%s: exporting %q at %s: %w", c.Repo, directory, commit, err)
	}
	if err := untar(bytes.NewReader(tarball), dest); err != nil {
		return fmt.Errorf("%s: exporting %q at %s: %w", c.Repo, directory, commit, err)
	}
	return nil
}

// untar writes a git archive's regular files, directories and symbolic
// links under dest, refusing names that would leave it.
func untar(r io.Reader, dest string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if name == "." || path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			continue
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		if err := writeEntry(tr, h, target); err != nil {
			return err
		}
	}
}

func writeEntry(r io.Reader, h *tar.Header, target string) error {
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(target, 0o755)
	case tar.TypeSymlink:
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.Symlink(h.Linkname, target)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
		if err != nil {
			return err
		}
		_, werr := io.Copy(f, r)
		return errors.Join(werr, f.Close())
	}
	return nil // pax headers and submodule entries carry no files
}
