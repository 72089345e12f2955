package main

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's target without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestRelaxGCForStart: the start runs at startGCPercent and the target
// before it comes back once the server serves; a $GOGC the user set is
// left alone throughout.
func TestRelaxGCForStart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	for _, tt := range []struct {
		gogc        string
		during, end int
	}{
		{"", startGCPercent, 150},
		{"150", 150, 150},
		{"off", 150, 150}, // what the runtime made of $GOGC is kept
	} {
		restore := relaxGCForStart(func(k string) string {
			if k == "GOGC" {
				return tt.gogc
			}
			return ""
		})
		if got := gcPercent(); got != tt.during {
			t.Errorf("GOGC=%q: during the start %d, want %d", tt.gogc, got, tt.during)
		}
		restore()
		if got := gcPercent(); got != tt.end {
			t.Errorf("GOGC=%q: once serving %d, want %d", tt.gogc, got, tt.end)
		}
	}
}
