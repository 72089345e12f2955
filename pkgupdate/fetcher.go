package pkgupdate

import "context"

// fetcher fetches each repository once per command and keeps the clones
// until close.
type fetcher struct {
	clones map[string]*Clone
}

func newFetcher() *fetcher { return &fetcher{clones: map[string]*Clone{}} }

func (f *fetcher) clone(ctx context.Context, repo string) (*Clone, error) {
	if c, ok := f.clones[repo]; ok {
		return c, nil
	}
	c, err := FetchRepo(ctx, repo)
	if err != nil {
		return nil, err
	}
	f.clones[repo] = c
	return c, nil
}

func (f *fetcher) close() {
	for _, c := range f.clones {
		c.Close()
	}
}
