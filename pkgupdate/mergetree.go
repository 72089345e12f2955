package pkgupdate

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/stratadev/strata/merge3"
)

// mergeTree writes into out the combination of the original, updated and
// local versions of one package by strategy, then handles the nested
// packages (those with their own upstream) one by one as kpt does. rel is
// the package's path from the package being updated; root says whether
// this package's Kptfile is the one the update was started from (kpt keeps
// it under force-delete-replace).
func (u *updater) mergeTree(orig, upd, local, out string, strategy Strategy, rel string, root bool) error {
	nested, err := nestedUnion(orig, upd, local)
	if err != nil {
		return err
	}
	skip := skipper(nested)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	switch strategy {
	case ResourceMerge:
		err = u.resourceMerge(orig, upd, local, out, rel, skip)
	case FastForward:
		err = fastForward(orig, upd, local, out, filepath.Join(u.opts.Dir, rel), root, skip)
	case ForceDeleteReplace:
		err = replace(upd, local, out, root, skip)
	case CopyMerge:
		err = u.copyMerge(orig, upd, local, out, skip)
	default:
		err = fmt.Errorf("%s: unknown update strategy %q", filepath.Join(local, KptfileName), strategy)
	}
	if err != nil {
		return err
	}
	for _, p := range nested {
		if err := u.mergeNested(orig, upd, local, out, p, strategy, path.Join(rel, p)); err != nil {
			return err
		}
	}
	return nil
}

func (u *updater) resourceMerge(orig, upd, local, out, rel string, skip func(string) bool) error {
	rep, err := merge3.Dirs(orig, upd, local, out, merge3.Options{
		OnConflict: u.opts.OnConflict, Schema: u.opts.Schema, SkipDir: skip,
	})
	if err != nil {
		return err
	}
	u.record(rel, rep)
	return nil
}

// record adds a merge report, with files named from the updated package.
func (u *updater) record(rel string, rep *merge3.Report) {
	if rep == nil {
		return
	}
	for _, c := range rep.Conflicts {
		c.File = path.Join(rel, c.File)
		u.res.Conflicts = append(u.res.Conflicts, c)
	}
	for _, k := range rep.KeptDeleted {
		if rel != "." {
			k = rel + ": " + k
		}
		u.res.KeptDeleted = append(u.res.KeptDeleted, k)
	}
}

// mergeNested handles one nested package p present in any of the three
// versions, by kpt's table: added upstream → copied; added on both sides →
// an error; added or deleted locally → left as local has it; deleted
// upstream → deleted unless local changed it; present everywhere → merged
// by the same strategy, unless local points it at another upstream.
func (u *updater) mergeNested(orig, upd, local, out, p string, strategy Strategy, rel string) error {
	o, n, l := filepath.Join(orig, p), filepath.Join(upd, p), filepath.Join(local, p)
	dst := filepath.Join(out, p)
	oE, nE, lE := isPackage(o), isPackage(n), isPackage(l)
	switch {
	case !oE && lE && nE:
		return fmt.Errorf("%s: nested package added both upstream and locally", rel)
	case !oE && !lE && nE:
		u.note("added nested package %s from upstream", rel)
		return copyTree(n, dst, nil)
	case !lE:
		return nil // deleted locally (or nowhere): kpt does not re-add it
	case !oE:
		return copyTree(l, dst, nil) // added locally
	case !nE:
		changed, err := changedFiles(o, l, nil)
		if err != nil {
			return err
		}
		if len(changed) == 0 {
			u.note("deleted nested package %s: upstream deleted it", rel)
			return nil
		}
		u.note("kept nested package %s: upstream deleted it but it has local changes", rel)
		return copyTree(l, dst, nil)
	}
	if ownUpstream(o, l) {
		u.note("kept nested package %s: its upstream was changed locally", rel)
		return copyTree(l, dst, nil)
	}
	return u.mergeTree(o, n, l, dst, strategy, rel, false)
}

func (u *updater) note(format string, args ...any) {
	u.res.Notes = append(u.res.Notes, fmt.Sprintf(format, args...))
}

func isPackage(dir string) bool { return exists(filepath.Join(dir, KptfileName)) }

// ownUpstream reports whether local's Kptfile names another upstream than
// the original's: the user updated the nested package on their own.
func ownUpstream(orig, local string) bool {
	ko, err1 := ReadKptfile(orig)
	kl, err2 := ReadKptfile(local)
	if err1 != nil || err2 != nil {
		return false
	}
	uo, ul := ko.Upstream(), kl.Upstream()
	if uo == nil || ul == nil {
		return uo != ul
	}
	return uo.Git != ul.Git
}

// prefixed joins rel and each file.
func prefixed(rel string, files []string) string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = path.Join(rel, f)
	}
	return strings.Join(out, ", ")
}
