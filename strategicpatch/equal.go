package strategicpatch

// equal reports whether two values are the same JSON value: maps with the same
// members in any order, lists with equal items in order, scalars with equal
// identities (so 80 and 80.0 are equal, 80 and "80" are not).
//
// Values written alike are decided by their text, once, at the top: the
// walk below does not compare texts again, so the work stays linear.
func equal[N any, R reader[N]](r R, a, b N) bool {
	if t, ok := any(r).(textReader[N]); ok && t.sameText(a, b) {
		return true
	}
	return equalWalk(r, a, b)
}

func equalWalk[N any, R reader[N]](r R, a, b N) bool {
	ka, kb := r.kind(a), r.kind(b)
	if ka != kb {
		return false
	}
	switch ka {
	case Map:
		if r.count(a) != r.count(b) {
			return false
		}
		same := true
		r.members(a, func(key string, _, va N) bool {
			vb, ok := r.lookup(b, key)
			same = ok && equalWalk(r, va, vb)
			return same
		})
		return same
	case List:
		if r.count(a) != r.count(b) {
			return false
		}
		bs := make([]N, 0, r.count(b))
		r.items(b, func(it N) bool { bs = append(bs, it); return true })
		same, i := true, 0
		r.items(a, func(it N) bool {
			same = equalWalk(r, it, bs[i])
			i++
			return same
		})
		return same
	}
	return r.identity(a) == r.identity(b)
}

// textReader is a reader that can tell two values are written alike: the
// same text is the same value.
type textReader[N any] interface {
	sameText(a, b N) bool
}

func (jsonReader) sameText(a, b jnode) bool {
	return string(a.t.Raw(a.i)) == string(b.t.Raw(b.i))
}

// indexedMembers is the size from which membersOf indexes a map instead of
// scanning it for each key.
const indexedMembers = 32

// membersOf returns a lookup of the members of map s (none when s is absent or
// not a map). Large maps are indexed once, so that looking up every key of
// another map stays linear.
func membersOf[N any, R reader[N]](r R, s side[N]) func(key string) (N, bool) {
	if !s.has || r.kind(s.n) != Map {
		return func(string) (N, bool) { var none N; return none, false }
	}
	if r.count(s.n) <= indexedMembers {
		return func(key string) (N, bool) { return r.lookup(s.n, key) }
	}
	index := make(map[string]N, r.count(s.n))
	r.members(s.n, func(key string, _, v N) bool {
		if _, dup := index[key]; !dup {
			index[key] = v // the first of duplicates, as lookup finds it
		}
		return true
	})
	return func(key string) (N, bool) {
		v, ok := index[key]
		return v, ok
	}
}
