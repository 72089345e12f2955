// Package pkgupdate fetches configuration packages from git repositories and
// updates them from their upstream, the way `kpt pkg get` and `kpt pkg
// update` do, so that kpt packages work with strata as they are.
//
// A package is a directory with a Kptfile (kpt.dev/v1). Its upstream section
// names a git repository, a directory inside it and a ref; its upstreamLock
// section records the commit last fetched. Get copies a directory of a commit
// into a new package and writes both sections. Update fetches the original
// commit (upstreamLock) and the new one (upstream's ref, or the ref asked
// for) and combines them with the local package by one of kpt's strategies:
// resource-merge (a three-way merge by package merge3), fast-forward,
// force-delete-replace or copy-merge. Nested packages with an upstream of
// their own are added, deleted, merged and then updated from their own
// upstream, as kpt does.
//
// The Kptfile is edited on its YAML node tree, never through a struct, so
// its comments, key order and unknown fields survive. Git is used by running
// the git binary, configured as the user configured it. An update is built in
// a temporary directory beside the package and swapped in with renames, so an
// interrupted update leaves the package as it was (see swap.go).
package pkgupdate
