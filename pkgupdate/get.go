package pkgupdate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// GetOptions says what Get fetches and where.
type GetOptions struct {
	Spec Spec   // the repository, directory and ref ("" for the default branch)
	Dest string // the new package directory: missing, or an empty directory
	// Strategy is written to the Kptfile's upstream.updateStrategy, as
	// kpt pkg get --strategy writes it; "" means resource-merge.
	Strategy Strategy
}

// GetResult says what Get fetched.
type GetResult struct {
	Dest   string // the package directory written
	Ref    string // the ref fetched
	Commit string // the commit it resolved to
}

// Get fetches a directory of a git repository into a new package, as
// `kpt pkg get` does: the package's Kptfile (a minimal one when upstream
// has none) is named after Dest and records upstream (updateStrategy
// opts.Strategy, resource-merge by default) and upstreamLock (the commit); nested packages declaring
// an upstream they have not fetched are fetched; resources get kpt's
// rename-tracking marks. The package is assembled beside Dest and renamed
// into place, so a failure writes nothing.
func Get(ctx context.Context, opts GetOptions) (*GetResult, error) {
	dest, err := checkDest(opts.Dest)
	if err != nil {
		return nil, err
	}
	s := opts.Spec
	if s.Ref == "" {
		if s.Ref, err = DefaultBranch(ctx, s.Repo); err != nil {
			return nil, err
		}
	}
	stage, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".strata-get-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Dest, err)
	}
	defer os.RemoveAll(stage)
	f := newFetcher()
	defer f.close()
	strategy, err := ParseStrategy(string(opts.Strategy))
	if err != nil {
		return nil, err
	}
	res, err := f.fetchPackage(ctx, s, strategy, filepath.Base(dest), filepath.Join(stage, "pkg"))
	if err != nil {
		return nil, err
	}
	if err := annotate(filepath.Join(stage, "pkg")); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Dest, err)
	}
	os.Remove(dest) // an empty directory the package replaces
	if err := os.Rename(filepath.Join(stage, "pkg"), dest); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Dest, err)
	}
	res.Dest = dest
	return res, nil
}

// checkDest returns dest made absolute, refusing a non-empty directory, a
// file, or a missing parent.
func checkDest(dest string) (string, error) {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dest, err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case err == nil && len(entries) > 0:
		return "", fmt.Errorf("%s: already exists and is not empty", dest)
	case err == nil:
		return abs, nil
	case exists(abs):
		return "", fmt.Errorf("%s: already exists and is not a directory", dest)
	}
	if info, err := os.Stat(filepath.Dir(abs)); err != nil || !info.IsDir() {
		return "", fmt.Errorf("%s: parent directory %s does not exist", dest, filepath.Dir(abs))
	}
	return abs, nil
}

// fetchPackage exports the package s names into out (which must not exist)
// and writes its Kptfile with name, upstream and upstreamLock; then it
// fetches the nested packages that declare an upstream without a lock.
func (f *fetcher) fetchPackage(ctx context.Context, s Spec, strategy Strategy, name, out string) (*GetResult, error) {
	c, err := f.clone(ctx, s.Repo)
	if err != nil {
		return nil, err
	}
	commit, used, err := c.Resolve(ctx, s.Ref, s.Directory)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := c.Export(ctx, commit, s.Directory, out); err != nil {
		return nil, err
	}
	kf, err := readFetchedKptfile(s, out, name)
	if err != nil {
		return nil, err
	}
	kf.SetName(name)
	kf.SetUpstream(Upstream{Type: OriginGit, Git: Git{Repo: s.Repo, Directory: s.Directory, Ref: s.Ref}, UpdateStrategy: strategy})
	kf.SetUpstreamLock(GitLock{Git: Git{Repo: s.Repo, Directory: s.Directory, Ref: used}, Commit: commit})
	if err := kf.WriteFile(out); err != nil {
		return nil, err
	}
	if err := f.fetchUnfetched(ctx, out); err != nil {
		return nil, err
	}
	return &GetResult{Ref: s.Ref, Commit: commit}, nil
}

// readFetchedKptfile reads the Kptfile of a package just exported into
// dir, naming it by repository, directory and ref in errors; a package
// without one gets kpt's minimal Kptfile.
func readFetchedKptfile(s Spec, dir, name string) (*Kptfile, error) {
	data, err := os.ReadFile(filepath.Join(dir, KptfileName))
	if os.IsNotExist(err) {
		return NewKptfile(filepath.Join(dir, KptfileName), name), nil
	}
	if err != nil {
		return nil, err
	}
	kf, err := ParseKptfile(fmt.Sprintf("%s%s/Kptfile@%s", s.Repo, strings.TrimSuffix(s.Directory, "/"), s.Ref), data)
	if err != nil {
		return nil, err
	}
	kf.File = filepath.Join(dir, KptfileName)
	return kf, nil
}
