package pkgupdate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNotGitRepo marks a repository git cannot read.
var ErrNotGitRepo = errors.New("not a git repository")

// ErrRefNotFound marks a ref that names no branch, tag or commit.
var ErrRefNotFound = errors.New("no branch, tag or commit of that name")

// GitError is a failed git command, with what git said.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg, _, _ := strings.Cut(strings.TrimSpace(e.Stderr), "\n")
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.Args[0], msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// runGit runs git in dir ("" for the current directory) and returns its
// standard output. Git runs as the user configured it, except that it never
// prompts for credentials.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("git is not installed: %w", err)
		}
		return nil, &GitError{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// notGitRepo reports whether git's message says the repository is not one.
func notGitRepo(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	s := ge.Stderr
	return strings.Contains(s, "does not appear to be a git repository") ||
		strings.Contains(s, "not a git repository") ||
		strings.Contains(s, "Could not read from remote repository") ||
		strings.Contains(s, "repository") && strings.Contains(s, "not found")
}
