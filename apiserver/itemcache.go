package apiserver

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/stratadev/strata/internal/jsonenc"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// itemCache keeps the JSON (or protobuf) of list items by object and resourceVersion, so
// that the objects of a list are encoded once per revision rather than on
// every list: most of a large list's time is encoding. An object's
// resourceVersion names its content within a resource, so a hit is exact.
//
// Entries of deleted objects are not tracked; two generations bound the
// memory instead: when the current one holds maxBytes of JSON it becomes
// the previous one, and entries still in use move back on their next hit.
type itemCache struct {
	maxBytes int
	// typeMeta: items keep kind and apiVersion, as kube-apiserver's lists
	// of custom resources do (built-in lists drop them from their items).
	typeMeta bool
	// encode, when set, encodes an item instead of JSON: the protobuf
	// messages of a built-in kind (newProtobufCache).
	encode func(map[string]any) ([]byte, error)
	// slot is where a list item's encoding is kept in the watch cache's
	// storage.Memo of its version (memoJSON, memoProtobuf).
	slot int

	mu       sync.Mutex
	current  map[itemKey]cachedItem
	previous map[itemKey]cachedItem
	bytes    int // in current
}

// itemKey names an object, and for watch events the event's type ("" for
// a list item).
type itemKey struct {
	event           watch.EventType
	namespace, name string
}

type cachedItem struct {
	rv   string
	data []byte
}

// The storage.Memo slots of a list item's JSON and protobuf encodings.
const (
	memoJSON = iota
	memoProtobuf
)

func newItemCache(maxBytes int, typeMeta bool) *itemCache {
	return &itemCache{maxBytes: maxBytes, typeMeta: typeMeta, slot: memoJSON, current: map[itemKey]cachedItem{}}
}

// newProtobufCache keeps the protobuf messages of a built-in kind's
// objects, for lists, gets and watch events in protobuf: converting an
// object to its typed form is most of the cost, and is paid once per
// revision.
func newProtobufCache(maxBytes int, kind *registry.Kind) *itemCache {
	return &itemCache{maxBytes: maxBytes, encode: kind.ProtobufMessage, slot: memoProtobuf, current: map[itemKey]cachedItem{}}
}

// encodeItem encodes one item as the cache keeps items.
func (c *itemCache) encodeItem(content map[string]any) ([]byte, error) {
	if c.encode != nil {
		return c.encode(content)
	}
	if !c.typeMeta {
		content = withoutTypeMeta(content)
	}
	return jsonenc.Marshal(content)
}

// encodeObject returns one object's item encoding, cached like a list
// item's. The bytes may be shared: never append to them.
func (c *itemCache) encodeObject(content map[string]any) ([]byte, error) {
	ns, name, rv := identity(content)
	return c.cached(itemKey{namespace: ns, name: name}, rv, func() ([]byte, error) { return c.encodeItem(content) })
}

// identity reads an object's namespace, name and resourceVersion straight
// from its metadata (a list asks for a thousand at a time).
func identity(obj map[string]any) (ns, name, rv string) {
	m, _ := obj["metadata"].(map[string]any)
	ns, _ = m["namespace"].(string)
	name, _ = m["name"].(string)
	rv, _ = m["resourceVersion"].(string)
	return ns, name, rv
}

// encodeItems returns the encoding of each list item. An item with a
// memo (memos, from storage.Store.ListMemos, may be empty) keeps its
// encoding there, found without reading the item; the others are kept
// here by object and resourceVersion. The bytes may be shared: never
// append to them.
func (c *itemCache) encodeItems(items []unstructured.Unstructured, memos []*storage.Memo) ([][]byte, error) {
	out := make([][]byte, len(items))
	var rest []int // items without a memo
	for i := range items {
		var m *storage.Memo
		if i < len(memos) {
			m = memos[i]
		}
		if m == nil {
			rest = append(rest, i)
			continue
		}
		if out[i] = m.Load(c.slot); out[i] == nil {
			data, err := c.encodeItem(items[i].Object)
			if err != nil {
				return nil, err
			}
			m.Store(c.slot, data)
			out[i] = data
		}
	}
	if len(rest) > 0 {
		if err := c.encodeKeyed(items, rest, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// encodeKeyed sets out[i] to the encoding of items[i] for each i of
// which, kept by object and resourceVersion.
func (c *itemCache) encodeKeyed(items []unstructured.Unstructured, which []int, out [][]byte) error {
	keys := make([]itemKey, len(items))
	rvs := make([]string, len(items))
	var missing []int
	c.mu.Lock()
	for _, i := range which {
		ns, name, rv := identity(items[i].Object)
		keys[i], rvs[i] = itemKey{namespace: ns, name: name}, rv
		if data, ok := c.getLocked(keys[i], rv); ok {
			out[i] = data
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	for _, i := range missing {
		data, err := c.encodeItem(items[i].Object)
		if err != nil {
			return err
		}
		out[i] = data
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range missing {
		if rvs[i] != "" {
			c.putLocked(keys[i], cachedItem{rv: rvs[i], data: out[i]})
		}
	}
	return nil
}

// encodeEvent returns the JSON of a watch event of obj, kept by event
// type, object and revision, so that the watchers of a resource share one
// encoding of each event instead of encoding it once each. The bytes are
// shared: never append to them.
func (c *itemCache) encodeEvent(typ watch.EventType, obj *unstructured.Unstructured) ([]byte, error) {
	return c.cachedEvent(typ, obj, func() ([]byte, error) { return encodeJSON(watchEvent{Type: typ, Object: obj.Object}) })
}

// cachedEvent returns the encoding of a watch event of obj that encode
// makes, kept as encodeEvent keeps the JSON (protobuf frames use it too).
func (c *itemCache) cachedEvent(typ watch.EventType, obj *unstructured.Unstructured, encode func() ([]byte, error)) ([]byte, error) {
	ns, name, rv := identity(obj.Object)
	return c.cached(itemKey{event: typ, namespace: ns, name: name}, rv, encode)
}

// cached returns the bytes kept under key at revision rv, or else what
// encode makes, kept for the next (an object without a revision is not
// kept).
func (c *itemCache) cached(key itemKey, rv string, encode func() ([]byte, error)) ([]byte, error) {
	if rv == "" {
		return encode()
	}
	c.mu.Lock()
	data, ok := c.getLocked(key, rv)
	c.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := encode()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, cachedItem{rv: rv, data: data})
	return data, nil
}

func (c *itemCache) getLocked(key itemKey, rv string) ([]byte, bool) {
	if it, ok := c.current[key]; ok && it.rv == rv {
		return it.data, true
	}
	if it, ok := c.previous[key]; ok && it.rv == rv {
		c.putLocked(key, it)
		return it.data, true
	}
	return nil, false
}

func (c *itemCache) putLocked(key itemKey, it cachedItem) {
	if c.bytes+len(it.data) > c.maxBytes {
		c.previous, c.current, c.bytes = c.current, make(map[itemKey]cachedItem, len(c.current)), 0
	}
	if old, ok := c.current[key]; ok {
		c.bytes -= len(old.data)
	}
	c.current[key] = it
	c.bytes += len(it.data)
}
