package storage

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Field selector keys the store understands.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// predicate filters objects by label and field selectors. The zero value
// matches everything.
type predicate struct {
	label labels.Selector
	field fields.Selector
	// fieldsOf gives an object's selectable fields; nil: metadata.name
	// and metadata.namespace.
	fieldsOf func(*unstructured.Unstructured) fields.Set
}

// newPredicate validates the selectors: without fieldsOf only
// metadata.name and metadata.namespace may appear in the field selector;
// the operator is =, == or !=.
func newPredicate(l labels.Selector, f fields.Selector, fieldsOf func(*unstructured.Unstructured) fields.Set) (predicate, error) {
	p := predicate{fieldsOf: fieldsOf}
	if l != nil && !l.Empty() {
		p.label = l
	}
	if f == nil || f.Empty() {
		return p, nil
	}
	metaOnly := true
	for _, r := range f.Requirements() {
		meta := r.Field == fieldName || r.Field == fieldNamespace
		if fieldsOf == nil && !meta {
			return predicate{}, badRequest("%q is not a known field selector: only %q, %q", r.Field, fieldName, fieldNamespace)
		}
		metaOnly = metaOnly && meta
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals, selection.NotEquals:
		default:
			return predicate{}, badRequest("field selector %q: operator %q is not supported", f.String(), r.Operator)
		}
	}
	p.field = f
	if metaOnly {
		// Every kind's fields hold these two as the object has them
		// (upstream's ObjectMetaFieldsSet); a kind's own fields can cost a
		// conversion to its internal type per object, which a watch of
		// one ConfigMap by name would pay on every ConfigMap's change.
		p.fieldsOf = nil
	}
	return p, nil
}

// empty reports whether the predicate matches everything.
func (p predicate) empty() bool { return p.label == nil && p.field == nil }

// matches reports whether obj passes both selectors.
func (p predicate) matches(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	if p.label != nil && !p.label.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if p.field != nil {
		set := fields.Set{fieldName: obj.GetName(), fieldNamespace: obj.GetNamespace()}
		if p.fieldsOf != nil {
			set = p.fieldsOf(obj)
		}
		if !p.field.Matches(set) {
			return false
		}
	}
	return true
}
