package strategicpatch_test

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// compatCase is a document and patch with Kubernetes mode's answer: the
// result as JSON, or "error" for a rejection.
type compatCase struct {
	name        string
	goType      any
	orig, patch string
	want        string
}

func applyCompat(t *testing.T, c compatCase) string {
	t.Helper()
	out, err := strategicpatch.ApplyJSON([]byte(c.orig), []byte(c.patch), schema.ForValue(c.goType), strategicpatch.Options{Compat: strategicpatch.Kubernetes})
	if err != nil {
		return "error"
	}
	return string(out)
}

func sameJSON(a, b string) bool {
	if a == "error" || b == "error" {
		return a == b
	}
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// TestKubernetesCompatRegressions holds the mismatches the differential test
// found, minimised: Kubernetes mode must give apimachinery's answer.
func TestKubernetesCompatRegressions(t *testing.T) {
	cases := []compatCase{
		{
			name:   "$setElementOrder with no elements anywhere is rejected",
			goType: genDoc{}, orig: `{}`,
			patch: `{"$setElementOrder/items":[],"items":[]}`,
			want:  "error",
		},
		{
			name:   "$setElementOrder with no elements anywhere, in a new list element's field",
			goType: genDoc{}, orig: `{"items":[{"name":"d"}]}`,
			patch: `{"items":[{"$setElementOrder/flags":[],"flags":[],"name":"d"}]}`,
			want:  "error",
		},
		{
			name:   "$setElementOrder with only a live empty list is rejected",
			goType: genDoc{}, orig: `{"tags":[]}`,
			patch: `{"$setElementOrder/tags":[]}`,
			want:  "error",
		},
		{
			name:   "a $patch: replace element after the last $setElementOrder entry breaks the order",
			goType: corev1.Pod{}, orig: `{"spec":{}}`,
			patch: `{"spec":{"$setElementOrder/containers":[{"name":"c"}],"containers":[{"name":"c"},{"$patch":"replace"}]}}`,
			want:  "error",
		},
		{
			name:   "a $patch: replace element before the last $setElementOrder entry is fine",
			goType: genDoc{}, orig: `{"items":[{"name":"x"}]}`,
			patch: `{"$setElementOrder/items":[{"name":"c"},{"name":"d"}],"items":[{"$patch":"replace"},{"name":"c"}]}`,
			want:  `{"items":[{"name":"c"}]}`,
		},
		{
			name:   "new items take the places deleted items left in apimachinery's live slice",
			goType: genDoc{}, orig: `{"items":[{"name":"b"},{"name":"e"}]}`,
			patch: `{"$setElementOrder/items":[{"name":"a"}],"items":[{"name":"a"},{"$patch":"delete","name":"b"}]}`,
			want:  `{"items":[{"name":"e"},{"name":"a"}]}`,
		},
		{
			name:   "only as many new items as were deleted take live places",
			goType: genDoc{}, orig: `{"items":[{"name":"b"},{"name":"e"},{"name":"c"}]}`,
			patch: `{"$setElementOrder/items":[{"name":"a"},{"name":"d"},{"name":"c"}],"items":[{"name":"a"},{"name":"d"},{"$patch":"delete","name":"b"}]}`,
			want:  `{"items":[{"name":"e"},{"name":"a"},{"name":"d"},{"name":"c"}]}`,
		},
		{
			name:   "$patch: replace with $setElementOrder and no live list strips nested directives",
			goType: genDoc{}, orig: `{}`,
			patch: `{"$setElementOrder/items":[{"name":"e"},{"name":"a"}],"items":[{"meta":{"$patch":"delete"},"name":"e"},{"$patch":"replace"}]}`,
			want:  `{"items":[{"name":"e"}]}`,
		},
		{
			name:   "$patch: replace with $setElementOrder and no live list, in a retainKeys list",
			goType: corev1.Pod{}, orig: `{"spec":{}}`,
			patch: `{"spec":{"$setElementOrder/volumes":[{"name":"a"},{"name":"d"}],"volumes":[{"hostPath":{"$patch":"delete"},"name":"a"},{"$patch":"replace"}]}}`,
			want:  `{"spec":{"volumes":[{"name":"a"}]}}`,
		},
		{
			name:   "$patch: replace with a live list keeps nested directives",
			goType: genDoc{}, orig: `{"items":[{"name":"x"}]}`,
			patch: `{"items":[{"meta":{"$patch":"delete"},"name":"e"},{"$patch":"replace"}]}`,
			want:  `{"items":[{"meta":{"$patch":"delete"},"name":"e"}]}`,
		},
		{
			name:   "strings in a merge list with a merge key are rejected",
			goType: genDoc{}, orig: `{"items":[]}`,
			patch: `{"items":["a"]}`,
			want:  "error",
		},
		{
			name:   "strings in a merge list with a merge key are rejected, live side",
			goType: genDoc{}, orig: `{"items":["a"]}`,
			patch: `{"items":[]}`,
			want:  "error",
		},
		{
			name:   "strings in ownerReferences are rejected",
			goType: corev1.Pod{}, orig: `{"metadata":{"ownerReferences":[]}}`,
			patch: `{"metadata":{"ownerReferences":["a"]}}`,
			want:  "error",
		},
		{
			name:   "an empty patch list beside an empty live list with a merge key is fine",
			goType: genDoc{}, orig: `{"items":[]}`,
			patch: `{"items":[]}`,
			want:  `{"items":[]}`,
		},
		{
			name:   "strings where there is no live list are taken as they are",
			goType: genDoc{}, orig: `{}`,
			patch: `{"items":["a"]}`,
			want:  `{"items":["a"]}`,
		},
		{
			name:   "a replaced list's live elements need no merge key",
			goType: genDoc{}, orig: `{"items":[{"value":"x"},{"name":"a"}]}`,
			patch: `{"items":[{"name":"b"},{"$patch":"replace"}]}`,
			want:  `{"items":[{"name":"b"}]}`,
		},
		{
			name:   "a replaced list's live elements may have any merge key value",
			goType: genDoc{}, orig: `{"items":[{"name":{"x":1}}]}`,
			patch: `{"items":[{"name":"b"},{"$patch":"replace"}]}`,
			want:  `{"items":[{"name":"b"}]}`,
		},
		{
			name:   "a merged list's live element with a map for its merge key is rejected",
			goType: genDoc{}, orig: `{"items":[{"name":{"x":1}}]}`,
			patch: `{"items":[{"name":"b"}]}`,
			want:  "error",
		},
		{
			name:   "a replaced list's patch elements still need their merge key",
			goType: genDoc{}, orig: `{"items":[{"name":"a"}]}`,
			patch: `{"items":[{"value":"y"},{"$patch":"replace"}]}`,
			want:  "error",
		},
		{
			name:   "a merged list's live element without its merge key is rejected",
			goType: genDoc{}, orig: `{"items":[{"value":"x"}]}`,
			patch: `{"items":[{"name":"b"}]}`,
			want:  "error",
		},
		{
			name:   "a replaced list's live element that is not a map is rejected",
			goType: genDoc{}, orig: `{"items":[1]}`,
			patch: `{"items":[{"name":"b"},{"$patch":"replace"}]}`,
			want:  "error",
		},
		{
			name:   "a $patch: delete element without its merge key is rejected, even in a replaced list",
			goType: genDoc{}, orig: `{"items":[{"name":"a"}]}`,
			patch: `{"items":[{"$patch":"replace"},{"$patch":"delete"}]}`,
			want:  "error",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := runReference([]byte(c.orig), []byte(c.patch), c.goType)
			refText := "error"
			if ref.err == nil {
				refText = mustJSON(ref.result)
			}
			if !sameJSON(refText, c.want) {
				t.Errorf("apimachinery gives %s, the case expects %s", refText, c.want)
			}
			if got := applyCompat(t, c); !sameJSON(got, c.want) {
				t.Errorf("kubernetes mode gives %s, want %s", got, c.want)
			}
		})
	}
}
