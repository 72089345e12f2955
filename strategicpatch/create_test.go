package strategicpatch_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

type createCase struct {
	Name     string `yaml:"name"`
	Schema   string `yaml:"schema"`
	Original string `yaml:"original"`
	Modified string `yaml:"modified"`
	Current  string `yaml:"current"`
	Patch    string `yaml:"patch"`  // the exact patch, compared as a value
	Result   string `yaml:"result"` // current with the patch applied
	Error    string `yaml:"error"`
}

// TestCreateSeedPatches checks the patches seed 000 prints, their result on
// the live object, and the same through the YAML representation.
func TestCreateSeedPatches(t *testing.T) {
	for _, c := range loadFixtures[createCase](t, "testdata/create/*.yaml") {
		t.Run(c.Name, func(t *testing.T) {
			st := schema.ForValue(testSchemas[c.Schema])
			o, m, cur := toJSON(t, c.Original), toJSON(t, c.Modified), toJSON(t, c.Current)
			patch, err := strategicpatch.CreateThreeWay(o, m, cur, st, true)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := decodeJSON(t, patch), decodeYAML(t, c.Patch); !reflect.DeepEqual(got, want) {
				t.Errorf("patch\n got: %s\nwant: %s", patch, mustJSON(want))
			}
			res, err := strategicpatch.ApplyJSON(cur, patch, st, strategicpatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := decodeJSON(t, res), decodeYAML(t, c.Result); !reflect.DeepEqual(got, want) {
				t.Errorf("result\n got: %s\nwant: %s", res, mustJSON(want))
			}
			yp, err := strategicpatch.CreateThreeWayYAML(yamlNode(t, c.Original), yamlNode(t, c.Modified), yamlNode(t, c.Current), st, true)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := yamlValue(t, yp), decodeYAML(t, c.Patch); !reflect.DeepEqual(got, want) {
				t.Errorf("YAML patch\n got: %s\nwant: %s", mustJSON(got), mustJSON(want))
			}
		})
	}
}

// TestCreateRoundTripFixtures turns every apply fixture's (original,
// expected) pair into a two-way patch and checks that applying it to the
// original gives the expected document, in both modes.
func TestCreateRoundTripFixtures(t *testing.T) {
	n := 0
	for _, pattern := range []string{"testdata/seeds/*.yaml", "testdata/cases/*.yaml"} {
		for _, c := range loadCases(t, pattern) {
			if c.Error != "" || hasDuplicateKeys(c.Name) {
				continue
			}
			n++
			st := schema.ForValue(testSchemas[c.Schema])
			o, m := toJSON(t, c.Original), toJSON(t, c.Expected)
			patch, err := strategicpatch.CreateTwoWay(o, m, st)
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
				continue
			}
			for _, mode := range []strategicpatch.Compat{strategicpatch.Strata, strategicpatch.Kubernetes} {
				res, err := strategicpatch.ApplyJSON(o, patch, st, strategicpatch.Options{Compat: mode})
				if mode == strategicpatch.Kubernetes && errors.Is(err, strategicpatch.ErrSchema) {
					continue // apimachinery rejects fields its Go type lacks
				}
				if err != nil {
					t.Errorf("%s (mode %d): applying %s: %v", c.Name, mode, patch, err)
					continue
				}
				if got, want := decodeJSON(t, res), decodeJSON(t, m); !reflect.DeepEqual(got, want) {
					t.Errorf("%s (mode %d): patch %s gives\n%s\nwant %s", c.Name, mode, patch, mustJSON(got), mustJSON(want))
				}
			}
		}
	}
	t.Logf("%d fixture pairs round-tripped", n)
}

// hasDuplicateKeys marks fixtures whose original holds duplicate merge keys
// or set values: a patch cannot remove one of two equal entries, so the
// round trip does not hold there by design.
func hasDuplicateKeys(name string) bool {
	name = strings.ToLower(name)
	return strings.Contains(name, "duplicat") || strings.Contains(name, "dedup")
}
