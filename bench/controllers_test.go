package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/stratadev/strata/controllers"
)

// TestStrataControllers: by default the strata servers run none of the
// kube-controller-manager controllers strata runs, so no root CA is
// published; "*" is strata's default, and a name strata-server would
// refuse is refused before anything starts.
func TestStrataControllers(t *testing.T) {
	sel, err := controllers.ParseSelection(Config{}.strataControllers())
	if err != nil {
		t.Fatalf("the default selection: %v", err)
	}
	for _, name := range controllers.Supported {
		if sel.Enabled(name) {
			t.Errorf("the default selection runs %s", name)
		}
	}
	for _, tc := range []struct {
		list    []string
		rootCA  bool
		invalid string
	}{
		{list: nil, rootCA: false},
		{list: []string{"*"}, rootCA: true},
		{list: []string{"*", "-" + controllers.RootCAPublisherName}, rootCA: false},
		{list: []string{"no-such-controller"}, invalid: `"no-such-controller" is not in the list of known controllers`},
	} {
		cfg := Defaults
		cfg.StrataControllers = tc.list
		err := cfg.validate()
		if tc.invalid != "" {
			if err == nil || !strings.Contains(err.Error(), tc.invalid) {
				t.Errorf("%v: validate = %v, want an error with %q", tc.list, err, tc.invalid)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: validate = %v", tc.list, err)
		}
		if got := cfg.publishesRootCA(); got != tc.rootCA {
			t.Errorf("%v: publishesRootCA = %v, want %v", tc.list, got, tc.rootCA)
		}
	}
	// Every strata server the run starts gets the selection.
	e := &env{tmp: "/tmp/x", controllers: Config{}.strataControllers()}
	spec := e.strataSpec("/tmp/x/strata", nil)
	if o := spec.Options(nil); !slices.Equal(o.Controllers, apiOnly()) {
		t.Errorf("server options' controllers = %v, want %v", o.Controllers, apiOnly())
	}
}
