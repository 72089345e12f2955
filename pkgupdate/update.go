package pkgupdate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/stratadev/strata/merge3"
	"github.com/stratadev/strata/schema"
)

// UpdateOptions says how Update updates a package.
type UpdateOptions struct {
	Dir        string   // the package directory
	Ref        string   // the ref to update to; "" keeps upstream.git.ref
	Strategy   Strategy // "" uses the Kptfile's updateStrategy (default resource-merge)
	OnConflict merge3.ConflictPolicy
	Schema     func(apiVersion, kind string) schema.Type
	// AllowDirty updates a package that has uncommitted git changes.
	AllowDirty bool
}

// UpdateResult says what Update did besides updating.
type UpdateResult struct {
	Ref         string            // the ref updated to
	Commit      string            // the commit it resolved to
	Conflicts   []merge3.Conflict // fields both sides changed (File relative to the package)
	KeptDeleted []string          // resources upstream deleted but local changed, kept
	Notes       []string          // nested packages added, deleted or kept
}

// Update updates the package in opts.Dir from its upstream, as `kpt pkg
// update` does. The result is built in a directory beside the package and
// swapped in at the end (see swapIn), so on any error, or if the process
// dies, the package is left as it was. Under the Fail conflict policy a
// conflict is a *merge3.ConflictsError and nothing changes.
func Update(ctx context.Context, opts UpdateOptions) (*UpdateResult, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := recoverSwap(dir); err != nil {
		return nil, err
	}
	if _, err := ReadKptfile(opts.Dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no Kptfile; not a kpt package", filepath.Join(opts.Dir, KptfileName))
		}
		return nil, err
	}
	if !opts.AllowDirty {
		if err := checkClean(ctx, dir); err != nil {
			return nil, err
		}
	}
	u := &updater{opts: opts, fetch: newFetcher(), res: &UpdateResult{}}
	defer u.fetch.close()
	err = ReplaceDir(dir, func(newDir string) error {
		return u.updatePackage(ctx, dir, newDir, opts.Ref, opts.Strategy, ".")
	})
	if err != nil {
		return nil, err
	}
	return u.res, nil
}

// updater carries one Update's options, fetched repositories and report.
type updater struct {
	opts  UpdateOptions
	fetch *fetcher
	res   *UpdateResult
}

// updatePackage writes into out the package at local updated from its own
// upstream: to ref, or to upstream.git.ref when ref is "".
func (u *updater) updatePackage(ctx context.Context, local, out, ref string, strategy Strategy, rel string) error {
	kf, err := ReadKptfile(local)
	if err != nil {
		return err
	}
	kf.File = filepath.Join(u.opts.Dir, rel, KptfileName) // as the user names it
	up := kf.Upstream()
	if err := checkUpstream(kf, up, ref); err != nil {
		return err
	}
	if ref == "" {
		ref = up.Git.Ref
	}
	if strategy == "" {
		strategy = up.UpdateStrategy
	}
	if strategy == "" {
		strategy = ResourceMerge
	}
	v, err := u.fetchVersions(ctx, kf, up, ref)
	if err != nil {
		return err
	}
	defer v.close()
	if err := u.mergeTree(v.orig, v.upd, local, out, strategy, rel, true); err != nil {
		return err
	}
	if err := writeLock(out, up, ref, u.opts.Ref != "" || rel != ".", v); err != nil {
		return err
	}
	if rel == "." {
		u.res.Ref, u.res.Commit = ref, v.commit
	}
	return u.updateNested(ctx, out, kf, up, rel)
}

// writeLock records the fetched commit in out's Kptfile, and the new ref
// in upstream.git.ref when one was asked for.
func writeLock(out string, up *Upstream, ref string, setRef bool, v *versions) error {
	kf, err := ReadKptfile(out)
	if err != nil {
		return err
	}
	newUp := *up
	if setRef {
		newUp.Git.Ref = ref
	}
	if kf.Upstream() == nil || setRef {
		kf.SetUpstream(newUp)
	}
	kf.SetUpstreamLock(GitLock{Git: Git{Repo: up.Git.Repo, Directory: v.directory, Ref: v.usedRef}, Commit: v.commit})
	return kf.WriteFile(out)
}

// updateNested updates, from their own upstreams, the nested packages of
// the package just written to out. As kpt does, a nested package from the
// same repository, inside the parent's directory and at the parent's old
// ref follows the parent to the new ref.
func (u *updater) updateNested(ctx context.Context, out string, parent *Kptfile, parentUp *Upstream, rel string) error {
	nested, err := nestedPackages(out)
	if err != nil {
		return err
	}
	for _, p := range nested {
		sub := filepath.Join(out, filepath.FromSlash(p))
		kf, err := ReadKptfile(sub)
		if err != nil {
			return err
		}
		if kf.Upstream() == nil { // a local subpackage: look inside
			if err := u.updateNested(ctx, sub, parent, parentUp, path.Join(rel, p)); err != nil {
				return err
			}
			continue
		}
		ref := ""
		if up := kf.Upstream(); u.opts.Ref != "" && followsParent(up, parentUp) {
			ref = u.opts.Ref
		}
		tmp := sub + ".strata-new"
		if err := u.updatePackage(ctx, sub, tmp, ref, u.opts.Strategy, path.Join(rel, p)); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		if err := os.RemoveAll(sub); err != nil {
			return err
		}
		if err := os.Rename(tmp, sub); err != nil {
			return err
		}
	}
	return nil
}

func followsParent(sub, parent *Upstream) bool {
	if sub == nil || parent == nil {
		return false
	}
	pd := cleanDirectory(parent.Git.Directory)
	sd := cleanDirectory(sub.Git.Directory)
	return sub.Git.Repo == parent.Git.Repo && sub.Git.Ref == parent.Git.Ref &&
		(pd == "/" || sd == pd || len(sd) > len(pd) && sd[:len(pd)+1] == pd+"/")
}
