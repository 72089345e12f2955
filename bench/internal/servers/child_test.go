package servers

import (
	"slices"
	"testing"
)

// TestOptionsCarryTheSpec: a strata child serves on loopback, on a free
// port, without compaction, with the spec's data directory, etcd, tokens,
// controllers and disabled admission plugins; no controllers in the spec
// leaves strata's default.
func TestOptionsCarryTheSpec(t *testing.T) {
	spec := Spec{Mode: ModeStrata, DataDir: "/d", EtcdServers: []string{"unix:///e"}, TokenFile: "/t",
		Controllers: []string{"-garbage-collector-controller"}, DisableAdmission: []string{"NamespaceLifecycle"}}
	o := spec.Options(nil)
	if o.DataDir != "/d" || !slices.Equal(o.EtcdServers, spec.EtcdServers) || o.TokenAuthFile != "/t" ||
		!slices.Equal(o.Controllers, spec.Controllers) || !slices.Equal(o.Admission.Disable, spec.DisableAdmission) {
		t.Errorf("options %+v do not carry the spec %+v", o, spec)
	}
	if o.BindAddress != "127.0.0.1" || o.SecurePort != 0 || o.CompactionInterval >= 0 {
		t.Errorf("bind %s, port %d, compaction %v: want loopback, a free port, none", o.BindAddress, o.SecurePort, o.CompactionInterval)
	}
	if def := (Spec{}).Options(nil); def.Controllers == nil {
		t.Errorf("no controllers in the spec: options' controllers nil, want strata's default")
	}
}
