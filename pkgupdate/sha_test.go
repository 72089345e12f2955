package pkgupdate

import "testing"

func TestLooksLikeSHA(t *testing.T) {
	for ref, want := range map[string]bool{
		"abc1": true, "0123456789abcdef0123456789abcdef01234567": true,
		"abc": false, "ABCD": false, "v1.2.3": false, "main": false, "": false,
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef":  true,
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0": false,
	} {
		if got := looksLikeSHA(ref); got != want {
			t.Errorf("looksLikeSHA(%q) = %v, want %v", ref, got, want)
		}
	}
}
