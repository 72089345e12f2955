// Package layering holds a test of strata's dependency direction: the patch
// engine and its lower layers never import storage, the package tools, or
// the heavy dependencies (etcd, client-go, kustomize) that higher layers use.
package layering

import (
	"os/exec"
	"strings"
	"testing"
)

func TestEngineImportsNothingHigh(t *testing.T) {
	low := []string{"./internal/jsontape", "./listorder", "./schema", "./strategicpatch"}
	forbidden := []string{
		"github.com/stratadev/strata/storage", "github.com/stratadev/strata/merge3",
		"github.com/stratadev/strata/pkgupdate", "github.com/stratadev/strata/patchfile",
		"github.com/stratadev/strata/cmd", "github.com/stratadev/strata/schema/builtin",
		"go.etcd.io/", "k8s.io/client-go", "k8s.io/api/", "sigs.k8s.io/kustomize",
		"k8s.io/apimachinery/pkg/util/strategicpatch",
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, low...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("the engine's layers import %s", dep)
			}
		}
	}
}
