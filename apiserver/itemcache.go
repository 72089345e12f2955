package apiserver

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/stratadev/strata/internal/jsonenc"
)

// itemCache keeps the JSON of list items by object and resourceVersion, so
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

	mu       sync.Mutex
	current  map[string]cachedItem
	previous map[string]cachedItem
	bytes    int // in current
}

type cachedItem struct {
	rv   string
	data []byte
}

func newItemCache(maxBytes int, typeMeta bool) *itemCache {
	return &itemCache{maxBytes: maxBytes, typeMeta: typeMeta, current: map[string]cachedItem{}}
}

// encode returns the JSON of a list item. The bytes may be shared: never
// append to them.
func (c *itemCache) encode(obj *unstructured.Unstructured) ([]byte, error) {
	return c.cached(obj.GetNamespace()+"/"+obj.GetName(), obj.GetResourceVersion(), func() ([]byte, error) {
		content := obj.Object
		if !c.typeMeta {
			content = withoutTypeMeta(content)
		}
		return jsonenc.Marshal(content)
	})
}

// encodeEvent returns the JSON of a watch event of obj, kept by event
// type, object and revision, so that the watchers of a resource share one
// encoding of each event instead of encoding it once each. The bytes are
// shared: never append to them.
func (c *itemCache) encodeEvent(typ watch.EventType, obj *unstructured.Unstructured) ([]byte, error) {
	key := string(typ) + " " + obj.GetNamespace() + "/" + obj.GetName()
	return c.cached(key, obj.GetResourceVersion(), func() ([]byte, error) {
		return encodeJSON(watchEvent{Type: typ, Object: obj.Object})
	})
}

// cached returns the bytes kept for key at rv, or encodes and keeps them;
// an object without a resourceVersion is encoded every time.
func (c *itemCache) cached(key, rv string, encode func() ([]byte, error)) ([]byte, error) {
	if rv == "" {
		return encode()
	}
	if data, ok := c.get(key, rv); ok {
		return data, nil
	}
	data, err := encode()
	if err != nil {
		return nil, err
	}
	c.put(key, cachedItem{rv: rv, data: data})
	return data, nil
}

func (c *itemCache) get(key, rv string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.current[key]; ok && it.rv == rv {
		return it.data, true
	}
	if it, ok := c.previous[key]; ok && it.rv == rv {
		c.putLocked(key, it)
		return it.data, true
	}
	return nil, false
}

func (c *itemCache) put(key string, it cachedItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(key, it)
}

func (c *itemCache) putLocked(key string, it cachedItem) {
	if c.bytes+len(it.data) > c.maxBytes {
		c.previous, c.current, c.bytes = c.current, make(map[string]cachedItem, len(c.current)), 0
	}
	if old, ok := c.current[key]; ok {
		c.bytes -= len(old.data)
	}
	c.current[key] = it
	c.bytes += len(it.data)
}
