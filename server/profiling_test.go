package server

import "testing"

// TestProfilingHandlers: --profiling (on by default, as kube-apiserver's)
// adds pprof's paths to the OIDC discovery ones; off, only those remain.
func TestProfilingHandlers(t *testing.T) {
	if !NewOptions().Profiling {
		t.Error("--profiling is off by default; kube-apiserver's is on")
	}
	sa := &serviceAccounts{}
	on := extraHandlers(&Options{Profiling: true}, sa)
	for _, p := range []string{"/debug/pprof", "/debug/pprof/", "/debug/pprof/profile", "/debug/pprof/symbol", "/debug/pprof/trace"} {
		if on[p] == nil {
			t.Errorf("with --profiling, %s is not served", p)
		}
	}
	off := extraHandlers(&Options{}, sa)
	if len(off) != len(sa.extraHandlers()) || off["/debug/pprof/"] != nil {
		t.Errorf("without --profiling, the extra paths are %d (pprof's served: %t), want only the %d OIDC ones",
			len(off), off["/debug/pprof/"] != nil, len(sa.extraHandlers()))
	}
}
