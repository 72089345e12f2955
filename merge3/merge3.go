// Package merge3 merges three versions of a configuration package — the
// original upstream, the updated upstream and the local fork — the way
// `kpt pkg update` does with its resource-merge strategy: resources are
// matched by group, kind, namespace and name wherever they live, their fields
// merge three-way (lists by the schema's merge keys), and where both sides
// changed one field upstream wins and the conflict is reported. The local
// files keep their comments, key order and formatting. Files that hold no
// resources merge by path: YAML ones (a values.yaml) document by document and
// key by key, others line by line. The Kptfile's identity (name, namespace,
// upstream, upstreamLock) stays local's; its pipeline functions are matched
// by name, image or exec, as kpt matches them.
package merge3

import "github.com/stratadev/strata/schema"

// ConflictPolicy says what to do when upstream and local changed the same
// field differently.
type ConflictPolicy string

// The conflict policies of `--on-conflict`.
const (
	// TakeUpstream keeps upstream's value and reports the conflict (the
	// default, as in kpt).
	TakeUpstream ConflictPolicy = "upstream"
	// KeepLocal keeps local's value and reports the conflict.
	KeepLocal ConflictPolicy = "local"
	// Fail stops the merge with a *ConflictsError; nothing is written.
	Fail ConflictPolicy = "fail"
)

// Options tune a merge.
type Options struct {
	OnConflict ConflictPolicy // "" means TakeUpstream
	// Schema returns the schema of a resource of the given apiVersion and
	// kind (nil: maps merge, lists are atomic). Nil means built-in kinds only.
	Schema func(apiVersion, kind string) schema.Type
	// SkipDir reports, for a directory relative to the package root, whether
	// the merge leaves it alone (a nested package with its own upstream).
	SkipDir func(rel string) bool
}

// Conflict is one field both sides changed differently.
type Conflict struct {
	File     string // the local file holding the resource (or the file, for text)
	Resource string // "apps/v1 Deployment default/web"; empty for non-resource files
	Path     string // the field, "spec.replicas"
	Upstream string // upstream's value, as YAML on one line
	Local    string // local's value
	Taken    string // "upstream" or "local"
}

// Report says what a merge did besides the plain merging.
type Report struct {
	Conflicts []Conflict
	// KeptDeleted lists resources ("file: title") and other files ("file")
	// upstream deleted but local changed: they are kept, as kpt keeps them.
	KeptDeleted []string
}
