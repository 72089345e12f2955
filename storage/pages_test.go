package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// TestPaginatedSnapshot: every page is read at the first page's revision,
// whatever is written between pages, for each way of starting a paginated
// list.
func TestPaginatedSnapshot(t *testing.T) {
	firstPages := map[string]func(rv int64) ListOptions{
		"limit/unset":          func(int64) ListOptions { return ListOptions{Limit: 2} },
		"limit/0 (cache)":      func(int64) ListOptions { return ListOptions{Limit: 2, ResourceVersion: "0"} },
		"limit/N exact legacy": func(rv int64) ListOptions { return ListOptions{Limit: 2, ResourceVersion: fmt.Sprint(rv)} },
		"limit/N Exact": func(rv int64) ListOptions {
			return ListOptions{Limit: 2, ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		},
		"limit/N NotOlderThan": func(rv int64) ListOptions {
			return ListOptions{Limit: 2, ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
		},
	}
	for name, first := range firstPages {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t)
			var rv int64
			for i := 1; i <= 5; i++ {
				rv = rvOf(t, mustCreate(t, s, widget("p", fmt.Sprintf("p%d", i), nil)))
			}
			ctx := context.Background()
			if err := s.cache.waitRevision(ctx, rv, 0); err != nil {
				t.Fatal(err)
			}
			l1, err := s.List(ctx, "p", first(rv))
			if err != nil {
				t.Fatal(err)
			}
			wantPage(t, l1, []string{"p/p1", "p/p2"}, 3)
			// Writes between pages: none of them may show up.
			mustCreate(t, s, widget("p", "p9", nil))
			if _, err := s.Delete(ctx, "p", "p4", nil); err != nil {
				t.Fatal(err)
			}
			setSize(t, s, "p", "p3", 7)
			l2, err := s.List(ctx, "p", ListOptions{Limit: 2, Continue: l1.GetContinue()})
			if err != nil {
				t.Fatal(err)
			}
			wantPage(t, l2, []string{"p/p3", "p/p4"}, 1)
			if size(&l2.Items[0]) != 1 || l2.GetResourceVersion() != l1.GetResourceVersion() {
				t.Fatalf("page 2 not at page 1's revision: size %d, rv %s vs %s", size(&l2.Items[0]), l2.GetResourceVersion(), l1.GetResourceVersion())
			}
			l3, err := s.List(ctx, "p", ListOptions{Limit: 2, Continue: l2.GetContinue()})
			if err != nil {
				t.Fatal(err)
			}
			wantPage(t, l3, []string{"p/p5"}, -1)
		})
	}
}

// wantPage checks a page's items and remainingItemCount (-1: last page, no
// continue token).
func wantPage(t *testing.T, l *unstructured.UnstructuredList, want []string, remaining int64) {
	t.Helper()
	if !slices.Equal(names(l), want) {
		t.Fatalf("page %v, want %v", names(l), want)
	}
	if remaining < 0 {
		if l.GetContinue() != "" || l.GetRemainingItemCount() != nil {
			t.Fatalf("last page has continue %q remaining %v", l.GetContinue(), l.GetRemainingItemCount())
		}
		return
	}
	if l.GetContinue() == "" || l.GetRemainingItemCount() == nil || *l.GetRemainingItemCount() != remaining {
		t.Fatalf("continue %q remaining %v, want %d", l.GetContinue(), l.GetRemainingItemCount(), remaining)
	}
}

// TestPagesFilledWithSelector: with a selector, pages still hold limit
// items when enough match, and remainingItemCount is not set.
func TestPagesFilledWithSelector(t *testing.T) {
	s := newTestStore(t)
	var rv int64
	for i := 0; i < 12; i++ {
		var lb map[string]string
		if i%3 == 0 {
			lb = map[string]string{"color": "red"}
		}
		rv = rvOf(t, mustCreate(t, s, widget("s", fmt.Sprintf("s%02d", i), lb)))
	}
	if err := s.cache.waitRevision(context.Background(), rv, 0); err != nil {
		t.Fatal(err)
	}
	sel := labels.SelectorFromSet(labels.Set{"color": "red"})
	for _, rv := range []string{"", "0"} {
		var got []string
		opts := ListOptions{Limit: 2, Label: sel, ResourceVersion: rv}
		for {
			l, err := s.List(context.Background(), "s", opts)
			if err != nil {
				t.Fatal(err)
			}
			if l.GetRemainingItemCount() != nil {
				t.Fatalf("remainingItemCount set with a selector")
			}
			if l.GetContinue() != "" && len(l.Items) != 2 {
				t.Fatalf("page not filled: %v", names(l))
			}
			got = append(got, names(l)...)
			if l.GetContinue() == "" {
				break
			}
			opts = ListOptions{Limit: 2, Label: sel, Continue: l.GetContinue()}
		}
		if !slices.Equal(got, []string{"s/s00", "s/s03", "s/s06", "s/s09"}) {
			t.Fatalf("rv %q: got %v", rv, got)
		}
	}
}

// TestCompactedRevisions: after a real etcd compaction, exact lists and
// continue tokens at older revisions are 410 Expired; a continue token's 410
// carries an inconsistent token that goes on from the newest state.
func TestCompactedRevisions(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	var old int64
	for i := 1; i <= 4; i++ {
		old = rvOf(t, mustCreate(t, s, widget("c", fmt.Sprintf("c%d", i), nil)))
	}
	l1, err := s.List(ctx, "c", ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, widget("c", "c5", nil))
	now := rvOf(t, setSize(t, s, "c", "c3", 9))
	if err := Compact(ctx, testClient, now); err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]ListOptions{
		"Exact/N":        {ResourceVersion: fmt.Sprint(old), ResourceVersionMatch: metav1.ResourceVersionMatchExact},
		"limit/N legacy": {ResourceVersion: fmt.Sprint(old), Limit: 2},
	} {
		_, err := s.List(ctx, "c", opts)
		e := wantStatus(t, err, ErrExpired, 410)
		if e.Status().Reason != metav1.StatusReasonExpired {
			t.Fatalf("%s: reason %s", name, e.Status().Reason)
		}
	}
	_, err = s.List(ctx, "c", ListOptions{Limit: 2, Continue: l1.GetContinue()})
	e := wantStatus(t, err, ErrExpired, 410)
	inconsistent := e.Status().ListMeta.Continue
	if inconsistent == "" {
		t.Fatal("410 for a continue token carries no inconsistent continue token")
	}
	l2, err := s.List(ctx, "c", ListOptions{Limit: 10, Continue: inconsistent})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(l2), []string{"c/c3", "c/c4", "c/c5"}) || size(&l2.Items[0]) != 9 || rvOf(t, l2) < now {
		t.Fatalf("inconsistent continuation got %v (c3 size %d) at %s", names(l2), size(&l2.Items[0]), l2.GetResourceVersion())
	}
	// Not-older-than reads still work after compaction.
	if _, err := s.List(ctx, "c", ListOptions{ResourceVersion: fmt.Sprint(old)}); err != nil {
		t.Fatal(err)
	}
}
