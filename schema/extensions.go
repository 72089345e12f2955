package schema

import "fmt"

// The Kubernetes OpenAPI extensions that carry patch metadata.
const (
	extPatchStrategy = "x-kubernetes-patch-strategy"
	extPatchMergeKey = "x-kubernetes-patch-merge-key"
	extListType      = "x-kubernetes-list-type"
	extListMapKeys   = "x-kubernetes-list-map-keys"
	extMapType       = "x-kubernetes-map-type"
	extPreserve      = "x-kubernetes-preserve-unknown-fields"
	extGVK           = "x-kubernetes-group-version-kind"
)

// extensions are the patch-related extensions written on one schema.
type extensions struct {
	has       extBits
	strategy  Strategy
	mergeKeys []string
	listType  string // "atomic", "set" or "map"
	mapKeys   []string
	mapType   string // "atomic" or "granular"
}

type extBits uint8

const (
	hasStrategy extBits = 1 << iota
	hasMergeKey
	hasListType
	hasMapType
)

// inherit copies the extensions b has and e lacks.
func (e *extensions) inherit(b *extensions) {
	if e.has&hasStrategy == 0 && b.has&hasStrategy != 0 {
		e.strategy = b.strategy
	}
	if e.has&hasMergeKey == 0 && b.has&hasMergeKey != 0 {
		e.mergeKeys = b.mergeKeys
	}
	if e.has&hasListType == 0 && b.has&hasListType != 0 {
		e.listType, e.mapKeys = b.listType, b.mapKeys
	}
	if e.has&hasMapType == 0 && b.has&hasMapType != 0 {
		e.mapType = b.mapType
	}
	e.has |= b.has
}

// patchMeta returns the strategy and merge keys of a field whose schema has
// these extensions and whose elements (for a list) have schema items. The
// x-kubernetes-patch-* extensions win; without them a list-type map merges
// by its map keys, and a list-type set merges (unless its elements are
// objects, which a set cannot merge without keys). x-kubernetes-map-type is
// validated but not obeyed: strategic merge patch merges such maps, as
// kubectl does, so a v3 document and the Go types agree on built-in kinds.
func (e *extensions) patchMeta(items *node) (Strategy, []string) {
	if e.has&(hasStrategy|hasMergeKey) != 0 {
		return e.strategy, e.mergeKeys
	}
	switch e.listType {
	case "map":
		return Merge, e.mapKeys
	case "set":
		if items != nil && items.kind == kindObject {
			return 0, nil
		}
		return Merge, nil
	}
	return 0, nil
}

// readPatchExtensions reads x-kubernetes-patch-strategy and
// x-kubernetes-patch-merge-key from schema m at path.
func readPatchExtensions(m map[string]any, path string, e *extensions, errs *errorList) {
	if v, ok := m[extPatchStrategy]; ok {
		s, ok := v.(string)
		if !ok {
			errs.addf(path, "%s: must be a string, not %s", extPatchStrategy, describe(v))
		} else if st, err := ParseStrategy(s); err != nil {
			errs.add(path, strategyRuleError(s, err))
		} else {
			e.strategy, e.has = st, e.has|hasStrategy
		}
	}
	if v, ok := m[extPatchMergeKey]; ok {
		s, ok := v.(string)
		if !ok {
			errs.addf(path, "%s: must be a string, not %s", extPatchMergeKey, describe(v))
		} else {
			e.mergeKeys, e.has = ParseMergeKeys(s), e.has|hasMergeKey
		}
	}
}

func strategyRuleError(value string, err error) error {
	msg := fmt.Sprintf("%s %q: unknown patch strategy", extPatchStrategy, value)
	if se, ok := err.(*StrategyError); ok && se.Part != value {
		msg += fmt.Sprintf(" %q", se.Part)
	}
	return &ruleError{msg: msg, err: err}
}

// readTopologyExtensions reads x-kubernetes-list-type,
// x-kubernetes-list-map-keys and x-kubernetes-map-type from schema m.
func readTopologyExtensions(m map[string]any, path string, e *extensions, errs *errorList) {
	if v, ok := m[extListType]; ok {
		s, _ := v.(string)
		switch s {
		case "atomic", "set", "map":
			e.listType, e.has = s, e.has|hasListType
		default:
			errs.addf(path, "%s %s: want atomic, set or map", extListType, show(v))
		}
	}
	if v, ok := m[extListMapKeys]; ok {
		e.mapKeys = readStringList(v, path, extListMapKeys, errs)
	}
	if e.listType == "map" && len(e.mapKeys) == 0 {
		errs.addf(path, "%s map needs a non-empty %s", extListType, extListMapKeys)
	}
	if v, ok := m[extMapType]; ok {
		s, _ := v.(string)
		switch s {
		case "atomic", "granular":
			e.mapType, e.has = s, e.has|hasMapType
		default:
			errs.addf(path, "%s %s: want atomic or granular", extMapType, show(v))
		}
	}
}

func readStringList(v any, path, name string, errs *errorList) []string {
	list, ok := v.([]any)
	if !ok {
		errs.addf(path, "%s: must be a list of strings, not %s", name, describe(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok || s == "" {
			errs.addf(index(child(path, name), i), "must be a non-empty string, not %s", show(item))
			continue
		}
		out = append(out, s)
	}
	return out
}

// show quotes a string value and describes any other.
func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return describe(v)
}
