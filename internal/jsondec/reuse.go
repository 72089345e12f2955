package jsondec

import "sync"

// Reuse keeps the decoded values of one member of one member of the
// top-level object (Outer.Inner: metadata.managedFields), by their JSON,
// for decoders to hand out again for equal bytes instead of decoding them.
// A stored object's managed fields are about half of what decoding a
// ConfigMap of 1 KiB costs (30 of its 58 allocations), and objects one
// manager wrote in the same second have equal ones: a watch cache's first
// load of 20,000 ConfigMaps decodes a few dozen lists instead of 20,000.
//
// The values handed out are shared by every object decoded with them:
// only objects that are never changed in place (a watch cache's) may be
// decoded with a Reuse. Safe for concurrent use.
type Reuse struct {
	outer, inner string
	maxBytes     int

	mu     sync.RWMutex
	values map[string]any // by the value's JSON
	bytes  int            // of the keys
}

// NewReuse returns a Reuse of the member inner of the member outer that
// keeps at most maxBytes of JSON; past it, it starts afresh (values
// already handed out stay with their objects).
func NewReuse(outer, inner string, maxBytes int) *Reuse {
	return &Reuse{outer: outer, inner: inner, maxBytes: maxBytes, values: map[string]any{}}
}

func (r *Reuse) get(raw []byte) (any, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.values[string(raw)] // no copy of raw for the lookup
	return v, ok
}

func (r *Reuse) put(raw []byte, v any) {
	if len(raw) > r.maxBytes {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bytes+len(raw) > r.maxBytes {
		r.values, r.bytes = map[string]any{}, 0
	}
	if _, ok := r.values[string(raw)]; !ok {
		r.values[string(raw)] = v
		r.bytes += len(raw)
	}
}

// member decodes the value of the member key of an object at depth, at
// pos, from d.reuse when it is the member d.reuse keeps.
func (d *decoder) member(key string, depth int) (any, bool) {
	r := d.reuse
	switch {
	case r == nil || depth > 1:
		return d.value(depth + 1)
	case depth == 0:
		if key != r.outer {
			return d.value(depth + 1)
		}
		d.inOuter = true
		v, ok := d.value(depth + 1)
		d.inOuter = false
		return v, ok
	case !d.inOuter || key != r.inner || !d.at('[') && !d.at('{'):
		return d.value(depth + 1)
	}
	start := d.pos
	// Equal bytes are a value decoded from them before: a JSON array or
	// object ends where its own bytes say, so these are what decoding
	// would have read. Bytes that are no valid value were never added.
	if end := d.end(); end > 0 {
		if v, ok := r.get(d.data[start:end]); ok {
			d.pos = end
			return v, true
		}
	}
	v, ok := d.value(depth + 1)
	if ok {
		r.put(d.data[start:d.pos], v)
	}
	return v, ok
}

// end returns the position just past the array or object at pos, if the
// input is valid JSON there (-1 if its brackets do not close). It checks
// nothing else: the bytes are decoded if no value of them is known.
func (d *decoder) end() int {
	depth := 0
	for i := d.pos; i < len(d.data); i++ {
		switch d.data[i] {
		case '"':
			i = d.stringEnd(i)
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
