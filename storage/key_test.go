package storage

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzIsDNS1123Label: the namespace check without a regular expression
// accepts exactly what upstream's validation.IsDNS1123Label accepts.
func FuzzIsDNS1123Label(f *testing.F) {
	for _, s := range []string{"", "a", "default", "kube-system", "-a", "a-", "A", "a_b", "a.b", "0", "9-9",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "ns\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(validation.IsDNS1123Label(s)) == 0
		if got := isDNS1123Label(s); got != want {
			t.Fatalf("isDNS1123Label(%q) = %v, upstream says %v", s, got, want)
		}
	})
}
