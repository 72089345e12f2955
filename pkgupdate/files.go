package pkgupdate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// listFiles returns the files and symbolic links under root as slash
// paths relative to it, skipping .git and the directories skip names
// (nil skips none). A missing root has no files.
func listFiles(root string, skip func(rel string) bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || skip != nil && skip(rel)) {
				return fs.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	sort.Strings(files)
	return files, err
}

// copyFile copies one file or symbolic link, creating parent directories
// and keeping the executable bit.
func copyFile(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		os.Remove(dst)
		return os.Symlink(target, dst)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, info.Mode().Perm())
}

// copyTree copies the files of src (as listFiles lists them) into dst.
func copyTree(src, dst string, skip func(rel string) bool) error {
	files, err := listFiles(src, skip)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	return nil
}

// sameFile reports whether two files (or links) have the same content.
func sameFile(a, b string) (bool, error) {
	ia, errA := os.Lstat(a)
	ib, errB := os.Lstat(b)
	if errA != nil || errB != nil {
		return errors.Is(errA, fs.ErrNotExist) && errors.Is(errB, fs.ErrNotExist), nil
	}
	if ia.Mode().Type() != ib.Mode().Type() {
		return false, nil
	}
	if ia.Mode()&fs.ModeSymlink != 0 {
		ta, _ := os.Readlink(a)
		tb, _ := os.Readlink(b)
		return ta == tb, nil
	}
	da, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	db, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(da, db), nil
}

// changedFiles lists the files that differ between two trees: changed,
// added or deleted, skipping the directories skip names.
func changedFiles(a, b string, skip func(rel string) bool) ([]string, error) {
	fa, err := listFiles(a, skip)
	if err != nil {
		return nil, err
	}
	fb, err := listFiles(b, skip)
	if err != nil {
		return nil, err
	}
	all := map[string]bool{}
	for _, f := range append(fa, fb...) {
		all[f] = true
	}
	var changed []string
	for f := range all {
		same, err := sameFile(filepath.Join(a, f), filepath.Join(b, f))
		if err != nil {
			return nil, err
		}
		if !same {
			changed = append(changed, f)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// exists reports whether p exists.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
