package servicealloc

import (
	"strings"
	"testing"
)

func TestParseClusterIPRange(t *testing.T) {
	cases := []struct {
		in, wantErr string
	}{
		{in: "10.96.0.0/12"},
		{in: "10.0.0.0/24"},
		{in: "fd00::/108"},
		{in: "10.0.0.0/8", wantErr: "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12"},
		{in: "fd00::/64", wantErr: "for 128-bit addresses, the mask must be >= 108"},
		{in: "10.0.0.0/30", wantErr: "must be at least 8 IP addresses"},
		{in: "10.96.0.0/12,fd00::/108", wantErr: "dual-stack ranges are not supported"},
		{in: "nonsense", wantErr: `--service-cluster-ip-range: "nonsense"`},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseClusterIPRange(tc.in)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestKubernetesServiceIP(t *testing.T) {
	cidr, err := ParseClusterIPRange(DefaultServiceClusterIPRange)
	if err != nil {
		t.Fatal(err)
	}
	ip, err := KubernetesServiceIP(cidr)
	if err != nil || ip.String() != "10.96.0.1" {
		t.Errorf("got %v %v, want 10.96.0.1", ip, err)
	}
}
