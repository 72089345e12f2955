// Package schema describes, field by field, how a strategic merge patch treats a
// document: which lists merge and by which key fields, which maps are replaced,
// which fields carry the retainKeys strategy.
//
// The patch engine asks one question, through the Type interface: "for this field
// of this map, what is the strategy, what are the merge keys, and what type does
// the value have?". Implementations read the answer from Go struct tags
// (ForGoType, ForKind), OpenAPI v2 and v3 documents, and CRD manifests.
//
// A nil Type means "no schema information": maps merge, lists are replaced.
package schema

import "strings"

// Strategy is a field's patch strategy: how a patch value combines with the
// live value. The zero value is the default: maps merge, lists are replaced.
type Strategy uint8

const (
	// Merge makes a list merge element by element: lists of maps by their merge
	// keys, lists of primitives as sets.
	Merge Strategy = 1 << iota
	// Replace makes a map be replaced whole rather than merged.
	Replace
	// RetainKeys makes a map honour the $retainKeys directive: live keys the
	// directive does not list are cleared.
	RetainKeys
)

// Has reports whether s includes every strategy bit of t.
func (s Strategy) Has(t Strategy) bool { return s&t == t }

// String returns the strategy as written in struct tags ("merge,retainKeys").
func (s Strategy) String() string {
	var parts []string
	if s.Has(Merge) {
		parts = append(parts, "merge")
	}
	if s.Has(Replace) {
		parts = append(parts, "replace")
	}
	if s.Has(RetainKeys) {
		parts = append(parts, "retainKeys")
	}
	return strings.Join(parts, ",")
}

// Field is the patch metadata of one map field.
type Field struct {
	// Strategy is the field's patch strategy.
	Strategy Strategy
	// MergeKeys are the fields identifying an element of a merge list of maps;
	// several fields form a multi-field key (patchMergeKey:"port,protocol").
	MergeKeys []string
	// Type is the type of the field's value, nil when unknown.
	Type Type
}

// Type is the schema of one value in a document.
type Type interface {
	// Field returns the metadata of a field of this map type. ok is false when
	// the type is known not to have the field (a struct without it); a type
	// that allows any field (a Go map, an object with additionalProperties)
	// answers ok with the value type.
	Field(name string) (f Field, ok bool)
	// Elem returns the type of the elements of this list type, or nil.
	Elem() Type
	// Name names the type in error messages ("v1.PodSpec", "#/definitions/...").
	Name() string
}

// ParseStrategy parses a patch strategy as written in a struct tag or in the
// x-kubernetes-patch-strategy extension: a comma-separated list of "merge",
// "replace" and "retainKeys".
func ParseStrategy(s string) (Strategy, error) {
	var st Strategy
	if s == "" {
		return 0, nil
	}
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "merge":
			st |= Merge
		case "replace":
			st |= Replace
		case "retainKeys":
			st |= RetainKeys
		case "":
		default:
			return 0, &StrategyError{Value: s, Part: part}
		}
	}
	return st, nil
}

// ParseMergeKeys splits a patch merge key ("name" or "port,protocol") into
// its fields.
func ParseMergeKeys(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	keys := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keys = append(keys, p)
		}
	}
	return keys
}

// StrategyError reports a patch strategy that is not one of merge, replace
// and retainKeys.
type StrategyError struct {
	Value string // the whole strategy as written
	Part  string // the unknown part
}

func (e *StrategyError) Error() string {
	return "schema: unknown patch strategy " + quote(e.Part) + " in " + quote(e.Value) +
		" (want merge, replace or retainKeys)"
}

func quote(s string) string { return "\"" + s + "\"" }
