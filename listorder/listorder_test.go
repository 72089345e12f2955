package listorder

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// ids splits "B C A" into identities.
func ids(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// render names each slot: "A" for a live item kept, "A'" for a live item
// merged with the patch, "+D" for a new patch item.
func render(l List, slots []Slot) string {
	var out []string
	for _, s := range slots {
		switch {
		case s.Patch < 0 && l.Live[s.Live] == NoIdentity:
			out = append(out, "_")
		case s.Patch < 0:
			out = append(out, l.Live[s.Live])
		case s.Live < 0:
			out = append(out, "+"+l.Patch[s.Patch])
		default:
			out = append(out, l.Live[s.Live]+"'")
		}
	}
	return strings.Join(out, " ")
}

func TestPlan(t *testing.T) {
	cases := []struct {
		name             string
		live, patch, del string
		order            string
		hasOrder, set    bool
		want, wantK8s    string
	}{
		{name: "DESIGN: [B C A] + [A' B' D]", live: "B C A", patch: "A B D",
			want: "C A' B' +D", wantK8s: "C A' B' +D"},
		{name: "DESIGN: [nginx] + [log-tailer]", live: "nginx", patch: "log-tailer",
			want: "nginx +log-tailer", wantK8s: "+log-tailer nginx"},
		{name: "DESIGN: [A B X] + [N A' B']", live: "A B X", patch: "N A B",
			want: "+N A' B' X", wantK8s: "+N A' B' X"},
		{name: "DESIGN: [C B D A E] + order [A B]", live: "C B D A E", patch: "A B", order: "A B", hasOrder: true,
			want: "C D E A' B'", wantK8s: "C D A' B' E"},
		{name: "seed 000: env with order", live: "ENV2 ENV5 ENV1 ENV3 ENV4", patch: "ENV6", del: "ENV3",
			order: "ENV1 ENV2 ENV6", hasOrder: true,
			want: "ENV5 ENV4 ENV1 ENV2 +ENV6", wantK8s: "ENV5 ENV1 ENV2 ENV4 +ENV6"},
		{name: "seed 000: finalizers with order and deletion", live: "b e a c d", patch: "f", del: "c",
			order: "a b f", hasOrder: true, set: true,
			want: "e d a b +f", wantK8s: "e a b +f d"},
		{name: "order entries that exist nowhere are ignored", live: "A B", patch: "A B", order: "C A B", hasOrder: true,
			want: "A' B'", wantK8s: "A' B'"},
		{name: "order alone reorders", live: "B A", order: "A B", hasOrder: true,
			want: "A B", wantK8s: "A B"},
		{name: "duplicates move together, the first merged", live: "A B A C", patch: "C A",
			want: "B C' A' A", wantK8s: "B C' A' A"},
		{name: "duplicates with order", live: "A B A", patch: "A", order: "B A", hasOrder: true,
			want: "B A' A", wantK8s: "B A' A"},
		{name: "deletion removes every duplicate", live: "A B A", del: "A",
			want: "B", wantK8s: "B"},
		{name: "set drops duplicates keeping the first", live: "a b a", patch: "c c", set: true,
			want: "a b +c", wantK8s: "+c a b"},
		{name: "set: a value added and deleted by one patch is absent", live: "a", patch: "b", del: "b", set: true,
			want: "a", wantK8s: "a"},
		{name: "map: delete and re-add replaces the element", live: "A B", patch: "A", del: "A",
			want: "B +A", wantK8s: "+A B"},
		{name: "items without identity stay put", live: "A _ B", patch: "B A",
			want: "_ B' A'", wantK8s: "_ B' A'"},
	}
	for _, c := range cases {
		l := List{Live: ids(c.live), Patch: ids(c.patch), Deleted: ids(c.del), Order: ids(c.order), HasOrder: c.hasOrder, Set: c.set}
		for i, id := range l.Live {
			if id == "_" {
				l.Live[i] = NoIdentity
			}
		}
		for _, m := range []struct {
			mode Mode
			want string
		}{{Default, c.want}, {Kubernetes, c.wantK8s}} {
			if m.mode == Kubernetes && strings.Contains(c.live, "_") {
				continue // apimachinery rejects a live item without its merge key
			}
			slots, err := Plan(l, m.mode)
			if err != nil {
				t.Errorf("%s (mode %d): %v", c.name, m.mode, err)
				continue
			}
			if got := render(l, slots); got != m.want {
				t.Errorf("%s (mode %d):\n got %s\nwant %s", c.name, m.mode, got, m.want)
			}
		}
	}
}

func TestPlanRejects(t *testing.T) {
	cases := []struct {
		name string
		l    List
		mode Mode
		want error
	}{
		{"patch item not in order", List{Patch: ids("A B"), Order: ids("A"), HasOrder: true}, Default,
			&OrderError{PatchIndex: 1, Identity: "B", Unlisted: true}},
		{"patch items out of order", List{Patch: ids("B A"), Order: ids("A B"), HasOrder: true}, Kubernetes,
			&OrderError{PatchIndex: 1, Identity: "A"}},
		{"empty order with patch items", List{Patch: ids("A"), HasOrder: true}, Default,
			&OrderError{PatchIndex: 0, Identity: "A", Empty: true}},
		{"duplicate patch identity", List{Patch: ids("A B A")}, Default,
			&DuplicateError{Identity: "A", First: 0, Second: 2}},
	}
	for _, c := range cases {
		_, err := Plan(c.l, c.mode)
		var ord *OrderError
		var dup *DuplicateError
		switch want := c.want.(type) {
		case *OrderError:
			if !errors.As(err, &ord) || !reflect.DeepEqual(ord, want) {
				t.Errorf("%s: got %v, want %v", c.name, err, want)
			}
		case *DuplicateError:
			if !errors.As(err, &dup) || !reflect.DeepEqual(dup, want) {
				t.Errorf("%s: got %v, want %v", c.name, err, want)
			}
		}
	}
	if _, err := Plan(List{Patch: ids("A"), HasOrder: true}, Kubernetes); err != nil {
		t.Errorf("kubernetes mode accepts an empty order, got %v", err)
	}
}

// TestPlanLinear plans a 100,000-item list in both modes and checks the
// result's length. It guards against a quadratic regression only by time (a
// quadratic plan runs for minutes and would hit the test timeout); the
// benchmarks in strategicpatch measure the linear growth.
func TestPlanLinear(t *testing.T) {
	const n = 100000
	l := List{HasOrder: true}
	for i := 0; i < n; i++ {
		id := "x" + itoa(i)
		l.Live = append(l.Live, id)
		if i%10 == 0 {
			l.Patch = append(l.Patch, id)
		}
		l.Order = append(l.Order, id)
	}
	slots, err := Plan(l, Default)
	if err != nil || len(slots) != n {
		t.Fatalf("got %d slots, %v", len(slots), err)
	}
	if slots, err = Plan(l, Kubernetes); err != nil || len(slots) != n {
		t.Fatalf("kubernetes: got %d slots, %v", len(slots), err)
	}
}

func itoa(i int) string {
	b := []byte{}
	for ; i > 0 || len(b) == 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
