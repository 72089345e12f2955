package pkgupdate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/stratadev/strata/merge3"
)

// nestedPackages returns the directories under root (relative slash paths)
// that hold a package (a Kptfile), not looking inside them. Each is merged
// on its own, as kpt merges subpackages, so resources of two nested
// packages never meet.
func nestedPackages(root string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if !d.IsDir() || p == root {
			return nil
		}
		if d.Name() == ".git" {
			return fs.SkipDir
		}
		_, err = ReadKptfile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		found = append(found, filepath.ToSlash(rel))
		return fs.SkipDir
	})
	return found, err
}

// nestedUnion returns the nested packages of any of the trees, sorted.
func nestedUnion(roots ...string) ([]string, error) {
	set := map[string]bool{}
	for _, r := range roots {
		found, err := nestedPackages(r)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			set[f] = true
		}
	}
	all := make([]string, 0, len(set))
	for f := range set {
		all = append(all, f)
	}
	sort.Strings(all)
	return all, nil
}

// skipper returns a SkipDir function for the given directories.
func skipper(dirs []string) func(rel string) bool {
	set := map[string]bool{}
	for _, d := range dirs {
		set[d] = true
	}
	return func(rel string) bool { return set[filepath.ToSlash(rel)] }
}

// annotate adds kpt's rename-tracking marks to the package in dir and,
// separately, to each nested package.
func annotate(dir string) error {
	nested, err := nestedPackages(dir)
	if err != nil {
		return err
	}
	if err := merge3.Annotate(dir, merge3.Options{SkipDir: skipper(nested)}); err != nil {
		return err
	}
	for _, p := range nested {
		if err := annotate(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			return err
		}
	}
	return nil
}

// fetchUnfetched fetches, under dir, every nested package that declares
// an upstream but has no upstreamLock yet (kpt's remote subpackages), and
// looks for more inside the fetched ones.
func (f *fetcher) fetchUnfetched(ctx context.Context, dir string) error {
	nested, err := nestedPackages(dir)
	if err != nil {
		return err
	}
	for _, rel := range nested {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		kf, err := ReadKptfile(p)
		if err != nil {
			return err
		}
		if kf.Upstream() == nil || kf.UpstreamLock() != nil {
			if err := f.fetchUnfetched(ctx, p); err != nil {
				return err
			}
			continue
		}
		if err := f.fetchNested(ctx, kf, p); err != nil {
			return err
		}
	}
	return nil
}

// fetchNested replaces the unfetched package at p with its upstream.
func (f *fetcher) fetchNested(ctx context.Context, kf *Kptfile, p string) error {
	up := kf.Upstream()
	if err := checkUpstream(kf, up, ""); err != nil {
		return err
	}
	name := kf.Name()
	if name == "" {
		name = filepath.Base(p)
	}
	tmp := p + ".strata-fetch"
	s := Spec{Repo: up.Git.Repo, Directory: cleanDirectory(up.Git.Directory), Ref: up.Git.Ref}
	strategy := up.UpdateStrategy
	if strategy == "" {
		strategy = ResourceMerge
	}
	if _, err := f.fetchPackage(ctx, s, strategy, name, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("%s: %w", kf.File, err)
	}
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// checkUpstream verifies that upstream names a git repository and a ref
// (ref may come from the command line instead, given as override).
func checkUpstream(kf *Kptfile, up *Upstream, override string) error {
	switch {
	case up == nil:
		return &FieldError{File: kf.File, Path: "upstream", Msg: "missing; the package has no upstream to update from"}
	case up.Git.Repo == "":
		return &FieldError{File: kf.File, Path: "upstream.git.repo", Msg: "missing"}
	case up.Git.Ref == "" && override == "":
		return &FieldError{File: kf.File, Path: "upstream.git.ref", Msg: "missing"}
	}
	return nil
}
