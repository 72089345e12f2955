package strategicpatch

import (
	"fmt"

	"github.com/stratadev/strata/internal/jsontape"
	"github.com/stratadev/strata/listorder"
	"github.com/stratadev/strata/schema"
)

// Compat selects whose rules a patch is applied by.
type Compat uint8

const (
	// Strata applies strata's rules (see the package documentation).
	Strata Compat = iota
	// Kubernetes reproduces apimachinery's strategicpatch results exactly,
	// quirks included, for users who must match a real cluster.
	Kubernetes
)

// Options tune how a patch is applied. The zero value is strata's default.
type Options struct {
	Compat Compat
}

func newEngine[N any, R reader[N], W writer[N]](r R, w W, opts Options) *engine[N, R, W] {
	e := &engine[N, R, W]{r: r, w: w}
	if opts.Compat == Kubernetes {
		e.mode = listorder.Kubernetes
	}
	return e
}

// ApplyJSON applies a strategic merge patch to a JSON document and returns the
// patched document as compact JSON. t is the document's schema (nil: maps
// merge, lists are replaced). The inputs are not modified. Members keep the
// document's order; members the patch adds follow, in the patch's order.
// A rejected patch returns an *Error (Rule ErrSyntax for malformed JSON)
// and no document.
func ApplyJSON(original, patch []byte, t schema.Type, opts Options) ([]byte, error) {
	ot, err := jsontape.Parse(original)
	if err != nil {
		return nil, &Error{Rule: ErrSyntax, Detail: fmt.Sprintf("document: %v", err)}
	}
	pt, err := jsontape.Parse(patch)
	if err != nil {
		return nil, &Error{Rule: ErrSyntax, Detail: fmt.Sprintf("patch: %v", err)}
	}
	w := &jsonWriter{buf: make([]byte, 0, len(original)+len(patch))}
	e := newEngine[jnode](jsonReader{}, w, opts)
	e.rootType = t
	if err := e.applyRoot(jnode{ot, 0}, jnode{pt, 0}); err != nil {
		return nil, err
	}
	return w.buf, nil
}
