package pkgupdate

import (
	"context"
	"os"
)

// versions are the two upstream versions an update combines with local:
// the original (the locked commit; empty when there is no lock) and the
// updated one, exported into temporary directories.
type versions struct {
	orig, upd string
	commit    string // the updated commit
	usedRef   string // the ref it was resolved from (kpt's package tag, if any)
	directory string
}

func (v *versions) close() {
	os.RemoveAll(v.orig)
	os.RemoveAll(v.upd)
}

// fetchVersions exports the original and updated versions of a package and
// adds kpt's rename-tracking marks to both, as kpt does before merging.
func (u *updater) fetchVersions(ctx context.Context, kf *Kptfile, up *Upstream, ref string) (*versions, error) {
	v := &versions{directory: cleanDirectory(up.Git.Directory)}
	var err error
	if v.orig, err = os.MkdirTemp("", "strata-original-"); err != nil {
		return nil, err
	}
	if v.upd, err = os.MkdirTemp("", "strata-upstream-"); err != nil {
		v.close()
		return nil, err
	}
	if err := u.exportUpdated(ctx, up, ref, v); err != nil {
		v.close()
		return nil, err
	}
	if err := u.exportOriginal(ctx, kf, up, v); err != nil {
		v.close()
		return nil, err
	}
	for _, d := range []string{v.orig, v.upd} {
		if err := annotate(d); err != nil {
			v.close()
			return nil, err
		}
	}
	return v, nil
}

func (u *updater) exportUpdated(ctx context.Context, up *Upstream, ref string, v *versions) error {
	c, err := u.fetch.clone(ctx, up.Git.Repo)
	if err != nil {
		return err
	}
	if v.commit, v.usedRef, err = c.Resolve(ctx, ref, v.directory); err != nil {
		return err
	}
	return c.Export(ctx, v.commit, v.directory, v.upd)
}

func (u *updater) exportOriginal(ctx context.Context, kf *Kptfile, up *Upstream, v *versions) error {
	lock := kf.UpstreamLock()
	if lock == nil || lock.Commit == "" {
		return nil // never fetched: everything counts as added
	}
	repo, dir := lock.Repo, lock.Directory
	if repo == "" {
		repo = up.Git.Repo
	}
	if dir == "" {
		dir = up.Git.Directory
	}
	c, err := u.fetch.clone(ctx, repo)
	if err != nil {
		return err
	}
	commit, _, err := c.Resolve(ctx, lock.Commit, "")
	if err != nil {
		return &FieldError{File: kf.File, Path: "upstreamLock.git.commit", Msg: err.Error()}
	}
	return c.Export(ctx, commit, cleanDirectory(dir), v.orig)
}
