package pkgupdate

import (
	"context"
	"fmt"
	"strings"
)

// DirtyError refuses to update a package with uncommitted git changes.
type DirtyError struct {
	Dir   string
	Files []string // as git status names them, relative to the work tree
}

func (e *DirtyError) Error() string {
	return fmt.Sprintf("%s: the package has uncommitted changes (%s); commit them or pass --allow-dirty", e.Dir, strings.Join(e.Files, ", "))
}

// checkClean refuses a package inside a git work tree whose files have
// uncommitted changes, untracked files included. A package outside any
// work tree passes.
func checkClean(ctx context.Context, dir string) error {
	out, err := runGit(ctx, dir, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		return nil
	}
	out, err = runGit(ctx, dir, "status", "--porcelain", "--untracked-files=all", "--", ".")
	if err != nil {
		return fmt.Errorf("%s: checking for uncommitted changes: %w", dir, err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if len(line) > 3 {
			files = append(files, line[3:])
		}
	}
	if len(files) > 0 {
		return &DirtyError{Dir: dir, Files: files}
	}
	return nil
}
