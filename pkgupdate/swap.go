package pkgupdate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// An update is built in a stage directory beside the package,
// "<parent>/.<name>.strata-update-XXXX/new", and swapped in:
//
//  1. The whole result is written to stage/new. Dying here leaves the
//     package untouched and a stage that the next update removes.
//  2. On Linux, renameat2(RENAME_EXCHANGE) swaps stage/new and the package
//     atomically: the package is either entirely old or entirely new.
//     Elsewhere (or on file systems without the flag) two renames are used:
//     2a. the package is renamed to stage/old;
//     2b. stage/new is renamed to the package.
//     Dying between 2a and 2b leaves no package but stage/old; the next
//     update (or recoverSwap) renames it back first.
//  3. The stage, now holding the old version, is removed.
const (
	stageInfix = ".strata-update-"
	stagedName = "new"
	oldName    = "old"
)

// testHook, when set by tests, is called at each step of the swap ("staged",
// "moved-out", "swapped") so that a test can fail or kill the process there.
var testHook func(step string)

// useExchange can be turned off by tests to exercise the two-rename path.
var useExchange = true

func hook(step string) {
	if testHook != nil {
		testHook(step)
	}
}

// ReplaceDir replaces directory dir with what build writes into newDir (a
// path that does not exist yet), by the staged swap described above: if build
// fails or the process dies, dir is left as it was, and a swap interrupted
// between its two renames is repaired by the next ReplaceDir or Update.
func ReplaceDir(dir string, build func(newDir string) error) error {
	if err := recoverSwap(dir); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+stageInfix)
	if err != nil {
		return err
	}
	defer discardStage(dir, stage)
	if err := build(filepath.Join(stage, stagedName)); err != nil {
		return err
	}
	return swapIn(dir, stage)
}

// swapIn replaces the package dir with stage/new and removes the stage.
func swapIn(dir, stage string) error {
	newDir := filepath.Join(stage, stagedName)
	hook("staged")
	if useExchange {
		if err := exchange(newDir, dir); err == nil {
			hook("swapped")
			os.RemoveAll(stage)
			return nil
		}
	}
	old := filepath.Join(stage, oldName)
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("%s: moving the old package aside: %w", dir, err)
	}
	hook("moved-out")
	if err := os.Rename(newDir, dir); err != nil {
		if rerr := os.Rename(old, dir); rerr != nil {
			return fmt.Errorf("%s: %w; the old package is in %s", dir, errors.Join(err, rerr), old)
		}
		return fmt.Errorf("%s: moving the new package in: %w", dir, err)
	}
	hook("swapped")
	os.RemoveAll(stage)
	return nil
}

// recoverSwap repairs what an interrupted update left beside dir: when dir
// is missing and a stage holds the old package (step 2a done, 2b not), the
// old package is renamed back; stages are then removed.
func recoverSwap(dir string) error {
	stages, err := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+stageInfix+"*"))
	if err != nil {
		return err
	}
	for _, stage := range stages {
		if !strings.HasPrefix(filepath.Base(stage), "."+filepath.Base(dir)+stageInfix) {
			continue
		}
		old := filepath.Join(stage, oldName)
		if !exists(dir) && exists(old) {
			if err := os.Rename(old, dir); err != nil {
				return fmt.Errorf("%s: restoring the package an interrupted update moved to %s: %w", dir, old, err)
			}
		}
		if exists(dir) {
			os.RemoveAll(stage)
		}
	}
	return nil
}

// discardStage removes a stage once Update returns, putting the old
// package back first if a failure (or a panic) struck between the renames.
func discardStage(dir, stage string) {
	if old := filepath.Join(stage, oldName); !exists(dir) && exists(old) {
		if os.Rename(old, dir) != nil {
			return // keep the stage: the old package is still in it
		}
	}
	os.RemoveAll(stage)
}
