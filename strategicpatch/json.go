package strategicpatch

import (
	"github.com/stratadev/strata/internal/jsontape"
)

// jnode is a value on one of the two JSON tapes.
type jnode struct {
	t *jsontape.Tape
	i jsontape.Node
}

// jsonReader reads JSON tapes.
type jsonReader struct{}

var kindOfTape = [...]Kind{
	jsontape.Null: Null, jsontape.False: Bool, jsontape.True: Bool,
	jsontape.Number: Number, jsontape.String: String,
	jsontape.Object: Map, jsontape.Array: List,
}

func (jsonReader) kind(n jnode) Kind { return kindOfTape[n.t.Kind(n.i)] }

func (jsonReader) members(n jnode, fn func(key string, keyNode, val jnode) bool) {
	n.t.Members(n.i, func(k, v jsontape.Node) bool {
		return fn(n.t.Str(k), jnode{n.t, k}, jnode{n.t, v})
	})
}

func (jsonReader) items(n jnode, fn func(item jnode) bool) {
	n.t.Items(n.i, func(it jsontape.Node) bool { return fn(jnode{n.t, it}) })
}

func (jsonReader) count(n jnode) int       { return n.t.Len(n.i) }
func (jsonReader) text(n jnode) string     { return n.t.Str(n.i) }
func (jsonReader) identity(n jnode) string { return n.t.Identity(n.i) }

func (jsonReader) lookup(n jnode, key string) (jnode, bool) {
	v, ok := n.t.Lookup(n.i, key)
	return jnode{n.t, v}, ok
}

// jsonWriter writes compact JSON, copying input values as their bytes.
type jsonWriter struct {
	buf      []byte
	hasItems []bool // per open container: something was written in it
	afterKey bool
}

func (w *jsonWriter) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.hasItems); n > 0 {
		if w.hasItems[n-1] {
			w.buf = append(w.buf, ',')
		}
		w.hasItems[n-1] = true
	}
}

func (w *jsonWriter) copy(n jnode) {
	w.sep()
	w.buf = append(w.buf, n.t.Raw(n.i)...)
}

func (w *jsonWriter) scalar(n, _ jnode, _ bool) { w.copy(n) }

func (w *jsonWriter) beginMap(jnode)  { w.open('{') }
func (w *jsonWriter) beginList(jnode) { w.open('[') }
func (w *jsonWriter) endMap()         { w.close('}') }
func (w *jsonWriter) endList()        { w.close(']') }

func (w *jsonWriter) open(c byte) {
	w.sep()
	w.buf = append(w.buf, c)
	w.hasItems = append(w.hasItems, false)
}

func (w *jsonWriter) close(c byte) {
	w.hasItems = w.hasItems[:len(w.hasItems)-1]
	w.buf = append(w.buf, c)
}

func (w *jsonWriter) key(k jnode) {
	w.sep()
	w.buf = append(w.buf, k.t.Raw(k.i)...)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}
