package strategicpatch_test

import (
	"fmt"
	"strings"
	"testing"

	k8ssp "k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// TestRejections runs every rejection fixture through both representations;
// in Kubernetes mode the decision must agree with apimachinery's unless the
// fixture says why it does not.
func TestRejections(t *testing.T) {
	for _, c := range loadCases(t, "testdata/reject/*.yaml") {
		t.Run(c.Name, func(t *testing.T) {
			goType := testSchemas[c.Schema]
			st := schema.ForValue(goType)
			for _, run := range representations {
				got, err := run.apply([]byte(c.Original), []byte(c.Patch), st, strategicpatch.Options{})
				checkResult(t, run.name, c, got, err)
			}
			_, wantErr := referenceApply(toJSON(t, c.Original), toJSON(t, c.Patch), goType)
			if c.Kubernetes != "" {
				if wantErr != nil {
					t.Errorf("listed as accepted by apimachinery (%s), but it rejects: %v", c.Kubernetes, wantErr)
				}
				return
			}
			for _, run := range representations {
				_, err := run.apply([]byte(c.Original), []byte(c.Patch), st, strategicpatch.Options{Compat: strategicpatch.Kubernetes})
				if (err == nil) != (wantErr == nil) {
					t.Errorf("kubernetes mode via %s: error %v, apimachinery's %v", run.name, err, wantErr)
				}
			}
		})
	}
}

// referenceApply runs apimachinery's apply, which panics on some inputs (a
// map-valued merge key, for one); a panic counts as a rejection.
func referenceApply(orig, patch []byte, goType any) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("apimachinery panicked: %v", r)
		}
	}()
	return k8ssp.StrategicMergePatch(orig, patch, goType)
}

// TestNestingLimit checks that documents nested past MaxDepth are rejected
// rather than exhausting the stack.
func TestNestingLimit(t *testing.T) {
	deep := strings.Repeat(`{"a":`, strategicpatch.MaxDepth+5) + "1" + strings.Repeat("}", strategicpatch.MaxDepth+5)
	out, err := strategicpatch.ApplyJSON([]byte(deep), []byte(deep), nil, strategicpatch.Options{})
	if err == nil || out != nil {
		t.Fatalf("got %d bytes, error %v; want a nesting error", len(out), err)
	}
	want := "nesting deeper than 1000 levels"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
