package pkgupdate

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Clone is a temporary bare copy of a repository's branches and tags.
type Clone struct {
	Repo string // the repository fetched
	dir  string // the bare repository
}

// FetchRepo copies the branches and tags of repo into a temporary bare
// repository. Close removes it.
func FetchRepo(ctx context.Context, repo string) (*Clone, error) {
	dir, err := os.MkdirTemp("", "strata-repo-")
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", repo, err)
	}
	c := &Clone{Repo: repo, dir: dir}
	if _, err := runGit(ctx, dir, "init", "--bare", "--quiet"); err != nil {
		c.Close()
		return nil, fmt.Errorf("fetching %s: %w", repo, err)
	}
	_, err = runGit(ctx, dir, "fetch", "--quiet", "--no-tags", "--", repo,
		"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
	if err != nil {
		c.Close()
		if notGitRepo(err) {
			return nil, fmt.Errorf("%s: %w (%w)", repo, ErrNotGitRepo, err)
		}
		return nil, fmt.Errorf("fetching %s: %w", repo, err)
	}
	return c, nil
}

// Close removes the temporary repository.
func (c *Clone) Close() error { return os.RemoveAll(c.dir) }

// looksLikeSHA reports whether ref may be an abbreviated or full commit id:
// 4 to 64 lower-case hex digits. (A regexp of {4,64} costs the strata
// command a millisecond at start-up to compile.)
func looksLikeSHA(ref string) bool {
	if len(ref) < 4 || len(ref) > 64 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Resolve finds the commit ref names in the package at directory: first a
// package tag "DIR/REF" (kpt's per-package versions), then a branch, a tag,
// a full ref name, or a commit (fetched by hash if no branch holds it). It
// returns the commit and the ref actually used.
func (c *Clone) Resolve(ctx context.Context, ref, directory string) (commit, used string, err error) {
	if pkgTag := strings.Trim(directory, "/"); pkgTag != "" {
		if sha, ok := c.revParse(ctx, "refs/tags/"+pkgTag+"/"+ref); ok {
			return sha, pkgTag + "/" + ref, nil
		}
	}
	candidates := []string{"refs/heads/" + ref, "refs/tags/" + ref}
	if strings.HasPrefix(ref, "refs/") {
		candidates = append(candidates, ref)
	}
	for _, full := range candidates {
		if sha, ok := c.revParse(ctx, full); ok {
			return sha, ref, nil
		}
	}
	if looksLikeSHA(ref) {
		if sha, ok := c.revParse(ctx, ref); ok {
			return sha, ref, nil
		}
		if _, err := runGit(ctx, c.dir, "fetch", "--quiet", "--no-tags", "--", c.Repo, ref); err == nil {
			if sha, ok := c.revParse(ctx, ref); ok {
				return sha, ref, nil
			}
		}
	}
	return "", "", fmt.Errorf("%s: ref %q: %w", c.Repo, ref, ErrRefNotFound)
}

func (c *Clone) revParse(ctx context.Context, name string) (string, bool) {
	out, err := runGit(ctx, c.dir, "rev-parse", "--verify", "--quiet", "--end-of-options", name+"^{commit}")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// DefaultBranch returns the branch the repository's HEAD names.
func DefaultBranch(ctx context.Context, repo string) (string, error) {
	out, err := runGit(ctx, "", "ls-remote", "--symref", "--", repo, "HEAD")
	if err != nil {
		if notGitRepo(err) {
			return "", fmt.Errorf("%s: %w (%w)", repo, ErrNotGitRepo, err)
		}
		return "", fmt.Errorf("%s: finding the default branch: %w", repo, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			return strings.TrimSpace(strings.TrimSuffix(rest, "HEAD")), nil
		}
	}
	return "", fmt.Errorf("%s: finding the default branch: HEAD names no branch", repo)
}
