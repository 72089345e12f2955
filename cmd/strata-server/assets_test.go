package main

import (
	"os"
	"path/filepath"
	"testing"
)

// strata hands envtest-assets to strata-server, whose links lead to
// itself: a kube-apiserver link runs as kube-apiserver.
func TestStrataEnvtestAssets(t *testing.T) {
	bin := buildStrata(t)
	assets := filepath.Join(t.TempDir(), "assets")
	r := runBinary(t, bin, t.TempDir(), nil, "envtest-assets", assets)
	if r.code != 0 || r.stdout != "KUBEBUILDER_ASSETS="+assets+"\n" || r.stderr != "" {
		t.Fatalf("strata envtest-assets: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	server := filepath.Join(filepath.Dir(bin), "strata-server")
	for _, name := range assetNames {
		if target, err := os.Readlink(filepath.Join(assets, name)); err != nil || target != server {
			t.Errorf("%s: link to %q (%v), want %s", name, target, err, server)
		}
	}
	r = runBinary(t, filepath.Join(assets, "kube-apiserver"), t.TempDir(), nil, "--runtime-config=api/all=true")
	const refused = "error: --runtime-config=api/all=true: refused: strata serves kube-apiserver's default API groups and versions only\n"
	if r.code != 2 || r.stderr != refused {
		t.Errorf("kube-apiserver --runtime-config: exit %d, stderr %q; want 2, %q", r.code, r.stderr, refused)
	}
}
