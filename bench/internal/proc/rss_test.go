package proc

import "testing"

// TestRSSSettler feeds the settler RSS samples of two processes, one
// sample per poll, and checks after which sample it says they settled.
func TestRSSSettler(t *testing.T) {
	quiet := int(rssQuiet / rssPoll) // samples in a quiet window: 12
	flat := func(n int, a, b int64) [][2]int64 {
		s := make([][2]int64, n)
		for i := range s {
			s[i] = [2]int64{a, b}
		}
		return s
	}
	cat := func(parts ...[][2]int64) [][2]int64 {
		var out [][2]int64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name    string
		samples [][2]int64
		want    int // 1-based sample at which it settles; 0: never
	}{
		{"flat from the first sample", flat(20, 100, 50), quiet + 1},
		{"growth under 1% is quiet", cat(flat(1, 1000, 50), flat(30, 1009, 50)), quiet + 1},
		{"the first process grows, then stops", cat(flat(3, 100, 50), flat(3, 200, 50), flat(20, 300, 50)), 6 + quiet + 1},
		{"the second process grows late", cat(flat(10, 100, 50), flat(20, 100, 90)), 10 + quiet + 1},
		{"a fall does not restart the window", cat(flat(5, 300, 50), flat(20, 200, 50)), quiet + 1},
		{"creeping growth past 1% of the window's start restarts it", creeping(40), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRSSSettler()
			got := 0
			for i, v := range tt.samples {
				if s.add([]int64{v[0], v[1]}) {
					got = i + 1
					break
				}
			}
			if got != tt.want {
				t.Errorf("settled at sample %d, want %d", got, tt.want)
			}
		})
	}
}

// creeping grows 0.5% a sample: never 1% in one step, always over 1%
// within a window.
func creeping(n int) [][2]int64 {
	s := make([][2]int64, n)
	v := 100000.0
	for i := range s {
		s[i] = [2]int64{int64(v), 50}
		v *= 1.005
	}
	return s
}
