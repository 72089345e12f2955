// Package layering holds a test of strata's dependency direction: the patch
// engine and its lower layers never import storage, the package tools, or
// the heavy dependencies (etcd, client-go, kustomize) that higher layers use.
package layering

import (
	"os/exec"
	"slices"
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

// TestStrataCommandIsLean keeps the strata command (patch, diff, merge3,
// pkg) from linking Kubernetes' server and client packages again: their
// package initialisers alone cost about 170 ms and 110 MB at every start
// (bench/README.md, "Start-up of the offline commands"). strata server and
// strata kubectl run in cmd/strata-server, which may link them. Nor does
// strata link k8s.io/api or k8s.io/apimachinery: the built-in kinds' patch
// metadata is a generated table (schema/builtin), and their initialisers and
// code cost milliseconds at every start.
func TestStrataCommandIsLean(t *testing.T) {
	forbidden := []string{
		"k8s.io/kubernetes/", "k8s.io/kubectl/", "k8s.io/apiserver/", "k8s.io/client-go/",
		"k8s.io/api/", "k8s.io/apimachinery/",
		"k8s.io/cli-runtime/", "k8s.io/component-base/", "k8s.io/apiextensions-apiserver/",
		"k8s.io/kube-openapi/pkg/builder", "go.etcd.io/", "google.golang.org/grpc",
		"github.com/prometheus/", "sigs.k8s.io/kustomize",
		"github.com/stratadev/strata/server", "github.com/stratadev/strata/apiserver",
		"github.com/stratadev/strata/registry", "github.com/stratadev/strata/storage",
		"github.com/stratadev/strata/internal/pki",
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./cmd/strata")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps ./cmd/strata listed %d packages: %q", len(deps), deps)
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if f = strings.TrimSuffix(f, "/"); dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("cmd/strata links %s (forbidden: %s); strata server and kubectl's dependencies belong in cmd/strata-server", dep, f)
			}
		}
	}
}

// TestTestenvIsLean keeps kubectl out of the package controller tests link
// to get an API server of their own: a test binary links only what its
// tests need. kubectl's configuration types (k8s.io/kubectl/pkg/config)
// are allowed: kube-apiserver's generated OpenAPI definitions, which the
// server serves, name them.
func TestTestenvIsLean(t *testing.T) {
	forbidden := []string{
		"k8s.io/kubectl/pkg/cmd", "k8s.io/kubectl/pkg/util", "k8s.io/cli-runtime/", "sigs.k8s.io/kustomize",
		"github.com/stratadev/strata/cmd", "github.com/stratadev/strata/internal/kubectltext",
		"sigs.k8s.io/controller-runtime", "github.com/onsi/",
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./testenv")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/stratadev/strata/server") {
		t.Fatalf("go list -deps ./testenv does not list the server: %q", deps)
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if f = strings.TrimSuffix(f, "/"); dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("testenv links %s (forbidden: %s)", dep, f)
			}
		}
	}
}
