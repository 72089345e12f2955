package schema

import (
	"sort"
	"strconv"
	"strings"
)

// dialect is what differs between the schema flavours strata reads.
type dialect struct {
	// refPrefix starts every local $ref ("#/definitions/"); empty when the
	// flavour has no references (CRDs).
	refPrefix string
	// topology enables x-kubernetes-list-type, -list-map-keys and -map-type.
	topology bool
}

// compiler turns decoded schemas into nodes.
type compiler struct {
	dialect
	defs  map[string]*node // named schemas, by name
	nodes []*node          // every node made, for finishAll
	errs  *errorList
}

func newCompiler(d dialect, errs *errorList) *compiler {
	return &compiler{dialect: d, defs: map[string]*node{}, errs: errs}
}

// declare creates the nodes of named schemas before any is compiled, so that
// references resolve whatever the order.
func (c *compiler) declare(defs map[string]any, path string) []string {
	names := sortedKeys(defs)
	for _, name := range names {
		n := &node{name: c.refPrefix + escapePointer(name), path: child(path, name)}
		c.defs[name] = n
		c.nodes = append(c.nodes, n)
	}
	return names
}

// newNode compiles the schema raw found at path, naming it name.
func (c *compiler) newNode(raw any, name, path string) *node {
	n := &node{name: name, path: path}
	c.nodes = append(c.nodes, n)
	c.fill(n, raw)
	return n
}

// fill compiles the schema raw into n.
func (c *compiler) fill(n *node, raw any) {
	m, ok := raw.(map[string]any)
	if !ok {
		c.errs.addf(n.path, "schema must be an object, not %s", describe(raw))
		return
	}
	n.kind = c.readKind(m, n.path)
	c.readRef(n, m)
	c.readAllOf(n, m)
	c.readProperties(n, m)
	c.readItems(n, m)
	c.readAdditional(n, m)
	if v, ok := m[extPreserve]; ok {
		b, isBool := v.(bool)
		if !isBool {
			c.errs.addf(n.path, "%s: must be a boolean, not %s", extPreserve, describe(v))
		}
		n.open = n.open || b
	}
	readPatchExtensions(m, n.path, &n.ext, c.errs)
	if c.topology {
		readTopologyExtensions(m, n.path, &n.ext, c.errs)
	}
}

func (c *compiler) readKind(m map[string]any, path string) kind {
	var types []any
	switch t := m["type"].(type) {
	case nil:
	case string:
		types = []any{t}
	case []any: // ["string", "null"]
		types = t
	default:
		c.errs.addf(child(path, "type"), "must be a string, not %s", describe(t))
	}
	k := kindUnknown
	for _, t := range types {
		switch t {
		case "object":
			k = kindObject
		case "array":
			k = kindArray
		case "string", "integer", "number", "boolean":
			k = kindScalar
		}
	}
	if k == kindUnknown && m["properties"] != nil {
		k = kindObject
	}
	if k == kindUnknown && m["items"] != nil {
		k = kindArray
	}
	return k
}

func (c *compiler) readRef(n *node, m map[string]any) {
	v, ok := m["$ref"]
	if !ok {
		return
	}
	path := child(n.path, "$ref")
	ref, ok := v.(string)
	switch {
	case !ok:
		c.errs.addf(path, "must be a string, not %s", describe(v))
	case c.refPrefix == "":
		c.errs.addf(path, "%q: references are not allowed here", ref)
	case !strings.HasPrefix(ref, c.refPrefix):
		c.errs.addf(path, "%q: only local references to %s... are supported", ref, c.refPrefix)
	default:
		target := c.defs[unescapePointer(strings.TrimPrefix(ref, c.refPrefix))]
		if target == nil {
			c.errs.addf(path, "%q: no such schema", ref)
			return
		}
		n.bases = append(n.bases, target)
	}
}

func (c *compiler) readAllOf(n *node, m map[string]any) {
	v, ok := m["allOf"]
	if !ok {
		return
	}
	path := child(n.path, "allOf")
	list, ok := v.([]any)
	if !ok {
		c.errs.addf(path, "must be a list of schemas, not %s", describe(v))
		return
	}
	for i, raw := range list {
		n.bases = append(n.bases, c.newNode(raw, n.name+"/allOf/"+strconv.Itoa(i), index(path, i)))
	}
}

func (c *compiler) readProperties(n *node, m map[string]any) {
	v, ok := m["properties"]
	if !ok {
		return
	}
	path := child(n.path, "properties")
	props, ok := v.(map[string]any)
	if !ok {
		c.errs.addf(path, "must be an object, not %s", describe(v))
		return
	}
	n.props = make(map[string]*node, len(props))
	for _, name := range sortedKeys(props) {
		n.props[name] = c.newNode(props[name], n.name+"/properties/"+escapePointer(name), child(path, name))
	}
}

func (c *compiler) readItems(n *node, m map[string]any) {
	switch v := m["items"].(type) {
	case nil:
	case []any:
		// A tuple of schemas (OpenAPI v2): the elements differ, so the
		// element type is unknown.
	default:
		n.items = c.newNode(v, n.name+"/items", child(n.path, "items"))
	}
}

func (c *compiler) readAdditional(n *node, m map[string]any) {
	switch v := m["additionalProperties"].(type) {
	case nil:
	case bool:
		n.open = n.open || v
	default:
		n.additional = c.newNode(v, n.name+"/additionalProperties", child(n.path, "additionalProperties"))
	}
}

// finishAll folds references into every node and reports reference cycles.
func (c *compiler) finishAll() {
	for _, n := range c.nodes {
		n.finish(nil, c.errs)
	}
	for _, n := range c.nodes {
		n.computeMeta()
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func unescapePointer(s string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}
