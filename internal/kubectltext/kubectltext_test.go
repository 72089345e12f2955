package kubectltext

import "testing"

func TestNeeded(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"strata-server", "kubectl", "get", "pods"}, true},
		{[]string{"strata-server", "kubectl"}, true},
		{[]string{"strata-server"}, false},
		{[]string{"strata-server", "--data-dir", "d"}, false},
		{[]string{"strata-server", "version"}, false},
		{[]string{"strata-server", "--v", "kubectl"}, false},
		{nil, false},
	} {
		if got := Needed(c.args); got != c.want {
			t.Errorf("Needed(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
