//go:build !linux

package pkgupdate

import "errors"

// exchange is not available here; swapIn falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
