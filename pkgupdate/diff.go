package pkgupdate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DiffOptions says what Diff compares.
type DiffOptions struct {
	Dir string // the local package
	// Ref is the upstream version to compare against: "" for the commit of
	// the Kptfile's upstreamLock, as kpt pkg diff's default.
	Ref string
}

// Diff writes to w the local changes of the package in opts.Dir: a
// unified diff (diff -r -u) from its upstream — at upstreamLock's commit,
// or at opts.Ref — to the local files, as kpt pkg diff's default diff type
// ("local") shows them. The upstream is staged as pkg get would have
// written it (the local Kptfile's name, upstream and upstreamLock, kpt's
// rename-tracking marks), so an unchanged package shows no difference. It
// reports whether anything differs. It needs the diff program, as kpt's
// default diff tool does.
func Diff(ctx context.Context, opts DiffOptions, w io.Writer) (bool, error) {
	kf, err := ReadKptfile(opts.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("%s: no Kptfile; not a kpt package", filepath.Join(opts.Dir, KptfileName))
		}
		return false, err
	}
	up, lock := kf.Upstream(), kf.UpstreamLock()
	ref := opts.Ref
	if ref == "" && lock != nil {
		ref = lock.Commit
	}
	if err := checkUpstream(kf, up, ref); err != nil {
		return false, err
	}
	if opts.Ref == "" && (lock == nil || lock.Commit == "") {
		return false, &FieldError{File: kf.File, Path: "upstreamLock.git.commit", Msg: "missing; give the upstream version to compare against (DIR@REF)"}
	}
	tmp, err := os.MkdirTemp("", "strata-pkg-diff-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "upstream")
	if err := stageUpstream(ctx, kf, up, lock, ref, staged); err != nil {
		return false, err
	}
	return runDiff(ctx, staged, opts.Dir, "upstream@"+shortRef(ref), w)
}

// stageUpstream exports the upstream package at ref into dir and gives it
// the local Kptfile's name, upstream and upstreamLock.
func stageUpstream(ctx context.Context, kf *Kptfile, up *Upstream, lock *GitLock, ref, dir string) error {
	f := newFetcher()
	defer f.close()
	c, err := f.clone(ctx, up.Git.Repo)
	if err != nil {
		return err
	}
	directory := cleanDirectory(up.Git.Directory)
	commit, _, err := c.Resolve(ctx, ref, directory)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := c.Export(ctx, commit, directory, dir); err != nil {
		return err
	}
	staged, err := readFetchedKptfile(Spec{Repo: up.Git.Repo, Directory: directory, Ref: ref}, dir, kf.Name())
	if err != nil {
		return err
	}
	staged.SetName(kf.Name())
	staged.SetUpstream(*up)
	if lock != nil {
		staged.SetUpstreamLock(*lock)
	}
	if err := staged.WriteFile(dir); err != nil {
		return err
	}
	return annotate(dir)
}

// runDiff runs diff -r -u from staged to local, naming staged's files by
// label instead of their temporary path.
func runDiff(ctx context.Context, staged, local, label string, w io.Writer) (bool, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "diff", "-r", "-u", "-x", ".git", staged, local)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return false, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == 1:
		_, err := io.WriteString(w, strings.ReplaceAll(out.String(), staged, label))
		return true, err
	}
	return false, fmt.Errorf("diff -r -u %s %s: %w: %s", label, local, err, strings.TrimSpace(errOut.String()))
}

func shortRef(ref string) string {
	if looksLikeSHA(ref) && len(ref) > 12 {
		return ref[:12]
	}
	return ref
}
