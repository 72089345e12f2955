package strategicpatch

// equal reports whether two values are the same JSON value: maps with the same
// members in any order, lists with equal items in order, scalars with equal
// identities (so 80 and 80.0 are equal, 80 and "80" are not).
func equal[N any, R reader[N]](r R, a, b N) bool {
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
			same = ok && equal(r, va, vb)
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
			same = equal(r, it, bs[i])
			i++
			return same
		})
		return same
	}
	return r.identity(a) == r.identity(b)
}
