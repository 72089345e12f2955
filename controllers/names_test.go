package controllers

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKnownControllersMatchKubeControllerManager: the names, aliases and
// defaults --controllers knows are kube-controller-manager v1.37's
// (testdata/kube-controller-manager-v1.37.tsv, taken from its
// ControllerDescriptors).
func TestKnownControllersMatchKubeControllerManager(t *testing.T) {
	data, err := os.ReadFile("testdata/kube-controller-manager-v1.37.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for line := range strings.Lines(string(data)) {
		if !strings.HasPrefix(line, "#") {
			want = append(want, strings.TrimSuffix(line, "\n"))
		}
	}
	var got []string
	for _, k := range known {
		aliases, def := "-", "on"
		if len(k.aliases) > 0 {
			aliases = strings.Join(k.aliases, ",")
		}
		if k.off {
			def = "off"
		}
		got = append(got, k.name+"\t"+aliases+"\t"+def)
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("known controllers (-kube-controller-manager +strata):\n%s", diff)
	}
}

// TestParseSelection: --controllers values give the controllers strata
// runs as kube-controller-manager would enable them, and unknown names
// its error, naming the flag.
func TestParseSelection(t *testing.T) {
	all := Supported
	for _, tc := range []struct {
		flag    []string
		enabled []string
		notRun  []string
		err     string
	}{
		{flag: []string{"*"}, enabled: all},
		{flag: nil},
		{flag: []string{"*", "-garbage-collector-controller"},
			enabled: []string{ServiceAccountName, RootCAPublisherName, RoleAggregationName, ResourceQuotaName, PolicyStatusName,
				PVCProtectionName, PVProtectionName}},
		{flag: []string{"*", "-garbagecollector", "-resourcequota"},
			enabled: []string{ServiceAccountName, RootCAPublisherName, RoleAggregationName, PolicyStatusName, PVCProtectionName, PVProtectionName}},
		{flag: []string{"resourcequota-controller", "serviceaccount"}, enabled: []string{ServiceAccountName, ResourceQuotaName}},
		{flag: []string{"-resourcequota-controller", "*", "resourcequota-controller"},
			enabled: []string{ServiceAccountName, RootCAPublisherName, RoleAggregationName, GarbageCollectorName, PolicyStatusName,
				PVCProtectionName, PVProtectionName}},
		{flag: []string{"*", "-deployment-controller", "-job"}, enabled: all},
		{flag: []string{"*", "bootstrap-signer-controller", "replicaset"}, enabled: all,
			notRun: []string{"bootstrap-signer-controller", "replicaset-controller"}},
		{flag: []string{"deployment-controller"}, notRun: []string{"deployment-controller"}},
		{flag: []string{"foo"}, err: `--controllers: "foo" is not in the list of known controllers`},
		{flag: []string{"*", "-bar", "garbage-collector"},
			err: `--controllers: ["bar" is not in the list of known controllers, "garbage-collector" is not in the list of known controllers]`},
	} {
		s, err := ParseSelection(tc.flag)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.err {
			t.Errorf("%q: error %q, want %q", tc.flag, gotErr, tc.err)
			continue
		}
		var enabled []string
		for _, name := range Supported {
			if s.Enabled(name) {
				enabled = append(enabled, name)
			}
		}
		if diff := cmp.Diff(tc.enabled, enabled); diff != "" {
			t.Errorf("%q: enabled (-want +got):\n%s", tc.flag, diff)
		}
		if diff := cmp.Diff(tc.notRun, s.NotRun()); diff != "" {
			t.Errorf("%q: not run (-want +got):\n%s", tc.flag, diff)
		}
	}
}

// TestDisabledByDefault: "*" leaves kube-controller-manager's
// disabled-by-default controllers off; naming one enables it.
func TestDisabledByDefault(t *testing.T) {
	s, _ := ParseSelection([]string{"*"})
	if s.Enabled("token-cleaner-controller") || !s.Enabled("ttl-controller") {
		t.Errorf(`"*": token-cleaner %v (want false), ttl %v (want true)`, s.Enabled("token-cleaner-controller"), s.Enabled("ttl-controller"))
	}
	s, _ = ParseSelection([]string{"*", "tokencleaner"})
	if !s.Enabled("token-cleaner-controller") {
		t.Error(`"*,tokencleaner": token-cleaner-controller not enabled`)
	}
}
