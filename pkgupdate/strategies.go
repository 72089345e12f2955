package pkgupdate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/merge3"
)

// LocalChangesError is fast-forward's refusal: local changed these files.
type LocalChangesError struct {
	Package string   // the package directory
	Files   []string // relative to the package
}

func (e *LocalChangesError) Error() string {
	return fmt.Sprintf("%s: local package files have been modified: %s; use another --strategy", e.Package, prefixed(".", e.Files))
}

// fastForward takes upstream's version, refusing when local differs from
// the original in anything but the Kptfile's upstream, upstreamLock and
// name (which get sets).
func fastForward(orig, upd, local, out, name string, root bool, skip func(string) bool) error {
	changed, err := changedFiles(orig, local, skip)
	if err != nil {
		return err
	}
	var files []string
	for _, f := range changed {
		if f == KptfileName {
			if same, err := sameKptfile(orig, local); err != nil || same {
				if err != nil {
					return err
				}
				continue
			}
		}
		files = append(files, f)
	}
	if len(files) > 0 {
		return &LocalChangesError{Package: name, Files: files}
	}
	return replace(upd, local, out, root, skip)
}

// replace writes upstream's files into out; the root package keeps its
// local Kptfile, as kpt's force-delete-replace does.
func replace(upd, local, out string, root bool, skip func(string) bool) error {
	if err := copyTree(upd, out, skip); err != nil {
		return err
	}
	if root {
		return copyFile(filepath.Join(local, KptfileName), filepath.Join(out, KptfileName))
	}
	return nil
}

// copyMerge is kpt's copy-merge: local's files, overwritten by upstream's,
// without the files upstream deleted; the Kptfile is merged three-way.
func (u *updater) copyMerge(orig, upd, local, out string, skip func(string) bool) error {
	if err := copyTree(local, out, skip); err != nil {
		return err
	}
	if err := copyTree(upd, out, skip); err != nil {
		return err
	}
	origFiles, err := listFiles(orig, skip)
	if err != nil {
		return err
	}
	for _, f := range origFiles {
		if !exists(filepath.Join(upd, f)) && f != KptfileName {
			if err := os.Remove(filepath.Join(out, f)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return u.mergeKptfile(orig, upd, local, out)
}

// mergeKptfile writes into out the three-way merge of the Kptfiles.
func (u *updater) mergeKptfile(orig, upd, local, out string) error {
	read := func(dir string) []byte {
		data, _ := os.ReadFile(filepath.Join(dir, KptfileName))
		return data
	}
	merged, rep, err := merge3.Files(KptfileName, read(orig), read(upd), read(local), merge3.Options{OnConflict: u.opts.OnConflict})
	if err != nil {
		return err
	}
	u.record(".", rep)
	return os.WriteFile(filepath.Join(out, KptfileName), merged, 0o644)
}

// sameKptfile compares two packages' Kptfiles without upstream,
// upstreamLock and metadata.name; a missing original counts as kpt's
// minimal Kptfile.
func sameKptfile(orig, local string) (bool, error) {
	a, err := strippedKptfile(orig)
	if err != nil {
		return false, err
	}
	b, err := strippedKptfile(local)
	if err != nil {
		return false, err
	}
	return bytes.Equal(a, b), nil
}

func strippedKptfile(dir string) ([]byte, error) {
	kf, err := ReadKptfile(dir)
	if os.IsNotExist(err) {
		kf, err = NewKptfile(KptfileName, ""), nil
	}
	if err != nil {
		return nil, err
	}
	root := kf.root()
	mapDelete(root, "upstream")
	mapDelete(root, "upstreamLock")
	if md := mapGet(root, "metadata"); md != nil && md.Kind == yaml.MappingNode {
		mapDelete(md, "name")
		if len(md.Content) == 0 {
			mapDelete(root, "metadata")
		}
	}
	return kf.Bytes()
}
