package apiserver

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stratadev/strata/internal/jsonenc"
)

// itemCache keeps the JSON of list items by object and resourceVersion, so
// that the objects of a list are encoded once per revision rather than on
// every list: most of a large list's time is encoding. An object's
// resourceVersion names its content within a resource, so a hit is exact.
//
// Entries of deleted objects are not tracked; two generations bound the
// memory instead: when the current one holds max entries it becomes the
// previous one, and entries still in use move back on their next hit.
type itemCache struct {
	max int
	// typeMeta: items keep kind and apiVersion, as kube-apiserver's lists
	// of custom resources do (built-in lists drop them from their items).
	typeMeta bool

	mu       sync.Mutex
	current  map[string]cachedItem
	previous map[string]cachedItem
}

type cachedItem struct {
	rv   string
	data []byte
}

func newItemCache(max int, typeMeta bool) *itemCache {
	return &itemCache{max: max, typeMeta: typeMeta, current: map[string]cachedItem{}}
}

// encode returns the JSON of a list item.
func (c *itemCache) encode(obj *unstructured.Unstructured) ([]byte, error) {
	key, rv := obj.GetNamespace()+"/"+obj.GetName(), obj.GetResourceVersion()
	if rv != "" {
		if data, ok := c.get(key, rv); ok {
			return data, nil
		}
	}
	content := obj.Object
	if !c.typeMeta {
		content = withoutTypeMeta(content)
	}
	data, err := jsonenc.Marshal(content)
	if err != nil || rv == "" {
		return data, err
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
	if len(c.current) >= c.max {
		c.previous, c.current = c.current, make(map[string]cachedItem, c.max)
	}
	c.current[key] = it
}
