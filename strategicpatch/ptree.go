package strategicpatch

// ptree is a patch under construction: small, built by the creator, and
// rendered through a writer once complete, so that empty sub-patches can be
// dropped and conflicts checked before anything is written.
type ptree[N any] struct {
	kind    pkind
	ref     N      // pCopy: an input value written as it is
	text    string // pString
	entries []pentry[N]
	items   []*ptree[N]
}

type pkind uint8

const (
	pMap pkind = iota
	pList
	pCopy
	pNull
	pString
)

type pentry[N any] struct {
	key     string
	keyNode N // the key as written in the input; synthesized keys have none
	hasNode bool
	val     *ptree[N]
}

func (p *ptree[N]) add(key string, val *ptree[N]) {
	p.entries = append(p.entries, pentry[N]{key: key, val: val})
}

func (p *ptree[N]) addKeyed(key string, keyNode N, val *ptree[N]) {
	p.entries = append(p.entries, pentry[N]{key: key, keyNode: keyNode, hasNode: true, val: val})
}

func copyOf[N any](n N) *ptree[N] { return &ptree[N]{kind: pCopy, ref: n} }

// textWriter writes values an input does not hold: directive keys, their
// string values, and null.
type textWriter interface {
	keyText(key string)
	stringValue(s string)
	null()
}

// render writes p through w.
func render[N any, W interface {
	writer[N]
	textWriter
}](p *ptree[N], w W, like N) {
	switch p.kind {
	case pCopy:
		w.copy(p.ref)
	case pNull:
		w.null()
	case pString:
		w.stringValue(p.text)
	case pList:
		w.beginList(like)
		for _, it := range p.items {
			render(it, w, like)
		}
		w.endList()
	case pMap:
		w.beginMap(like)
		for _, e := range p.entries {
			if e.hasNode {
				w.key(e.keyNode)
			} else {
				w.keyText(e.key)
			}
			render(e.val, w, like)
		}
		w.endMap()
	}
}
