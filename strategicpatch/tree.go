package strategicpatch

// Kind is the kind of a document value, the same for every representation.
type Kind uint8

// The kinds of values in a document.
const (
	Null Kind = iota
	Bool
	Number
	String
	Map
	List
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "map", "list"}[k]
}

func (k Kind) scalar() bool { return k < Map }

// reader is the read-only view the engine has of one document representation
// (JSON tape nodes, yaml.Node trees). N is a handle to a value in either input.
type reader[N any] interface {
	kind(n N) Kind
	// members calls fn for each member of map n, in document order, with the
	// key's text, the key node and the value node, until fn returns false.
	members(n N, fn func(key string, keyNode, val N) bool)
	// items calls fn for each item of list n in order until fn returns false.
	items(n N, fn func(item N) bool)
	// count is the number of members of a map or items of a list.
	count(n N) int
	// text is the value of a string scalar.
	text(n N) string
	// identity is a canonical text of a scalar, equal for equal values
	// across representations (see jsontape.Tape.Identity).
	identity(n N) string
	// lookup finds the first member of map n named key.
	lookup(n N, key string) (N, bool)
}

// writer builds the result document in the same representation.
type writer[N any] interface {
	// copy appends an input value (from either document) as it is.
	copy(n N)
	// scalar appends patch scalar n in place of live value like, keeping
	// what the representation can keep of like's presentation.
	scalar(n, like N, hasLike bool)
	// beginMap and beginList open a container presented like the given node.
	beginMap(like N)
	beginList(like N)
	// key appends the key of the next member, taken from an input key node.
	key(keyNode N)
	endMap()
	endList()
}
