package storage

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
)

// TestPredicateMetadataFields: a field selector on metadata.name and
// metadata.namespace alone is matched without the kind's fields; one
// naming another field asks for them.
func TestPredicateMetadataFields(t *testing.T) {
	obj := widget("ns", "a", nil)
	for _, tc := range []struct {
		selector  string
		want      bool
		wantCalls int
	}{
		{"metadata.name=a", true, 0},
		{"metadata.name==b", false, 0},
		{"metadata.namespace!=ns", false, 0},
		{"metadata.namespace=ns,metadata.name=a", true, 0},
		{"spec.x=1", true, 1},
		{"metadata.name=a,spec.x=2", false, 1},
	} {
		calls := 0
		fieldsOf := func(u *unstructured.Unstructured) fields.Set {
			calls++
			return fields.Set{fieldName: u.GetName(), fieldNamespace: u.GetNamespace(), "spec.x": "1"}
		}
		p, err := newPredicate(nil, fields.ParseSelectorOrDie(tc.selector), fieldsOf)
		if err != nil {
			t.Fatalf("%s: %v", tc.selector, err)
		}
		if got := p.matches(obj); got != tc.want || calls != tc.wantCalls {
			t.Errorf("%s: matches %v with %d calls of the kind's fields, want %v with %d", tc.selector, got, calls, tc.want, tc.wantCalls)
		}
	}
}
