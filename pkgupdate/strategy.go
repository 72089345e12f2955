package pkgupdate

import "fmt"

// Strategy is how Update combines local changes with upstream's.
type Strategy string

// kpt's update strategies.
const (
	// ResourceMerge merges original, upstream and local three-way (merge3).
	ResourceMerge Strategy = "resource-merge"
	// FastForward takes upstream, refusing when local changed anything.
	FastForward Strategy = "fast-forward"
	// ForceDeleteReplace replaces the package with upstream, dropping every
	// local change except the Kptfile's.
	ForceDeleteReplace Strategy = "force-delete-replace"
	// CopyMerge copies upstream's files over local, deletes the files
	// upstream deleted, and keeps files only local has.
	CopyMerge Strategy = "copy-merge"
)

// Strategies lists the strategies in the order help texts show them.
var Strategies = []Strategy{ResourceMerge, FastForward, ForceDeleteReplace, CopyMerge}

// ParseStrategy checks a strategy name; "" means resource-merge.
func ParseStrategy(s string) (Strategy, error) {
	if s == "" {
		return ResourceMerge, nil
	}
	for _, known := range Strategies {
		if Strategy(s) == known {
			return known, nil
		}
	}
	return "", fmt.Errorf("unknown update strategy %q; want resource-merge, fast-forward, force-delete-replace or copy-merge", s)
}
