package storage

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rvFixture is the state the resourceVersion table runs against: at old,
// namespace a holds w1..w4 (size 1) and b holds w5; after old, w1 became
// size 2 and w6 was created, at latest.
type rvFixture struct {
	s           *Store
	old, latest int64
}

func newRVFixture(t *testing.T) rvFixture {
	s := newTestStore(t)
	for _, n := range []string{"w1", "w2", "w3", "w4"} {
		mustCreate(t, s, widget("a", n, nil))
	}
	old := rvOf(t, mustCreate(t, s, widget("b", "w5", nil)))
	setSize(t, s, "a", "w1", 2)
	latest := rvOf(t, mustCreate(t, s, widget("a", "w6", nil)))
	// RV=0 may be served at any revision; let the cache catch up so that the
	// "any" cells see data.
	if err := s.cache.waitRevision(context.Background(), latest, 0); err != nil {
		t.Fatal(err)
	}
	return rvFixture{s: s, old: old, latest: latest}
}

func (f rvFixture) rv(n int64) string { return strconv.FormatInt(n, 10) }

func size(obj *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "size")
	return n
}

// wantLatestState: w1 is size 2 and w6 exists.
func wantLatestState(t *testing.T, f rvFixture, l *unstructured.UnstructuredList) {
	t.Helper()
	if !slices.Equal(names(l), []string{"a/w1", "a/w2", "a/w3", "a/w4", "a/w6"}) || size(&l.Items[0]) != 2 {
		t.Fatalf("want the latest state, got %v (w1 size %d) at %s", names(l), size(&l.Items[0]), l.GetResourceVersion())
	}
	if rvOf(t, l) < f.latest {
		t.Fatalf("list resourceVersion %s older than %d", l.GetResourceVersion(), f.latest)
	}
}

// wantOldState: the exact state at f.old.
func wantOldState(t *testing.T, f rvFixture, l *unstructured.UnstructuredList) {
	t.Helper()
	if !slices.Equal(names(l), []string{"a/w1", "a/w2", "a/w3", "a/w4"}) || size(&l.Items[0]) != 1 {
		t.Fatalf("want the state at %d, got %v (w1 size %d)", f.old, names(l), size(&l.Items[0]))
	}
	if rvOf(t, l) != f.old {
		t.Fatalf("list resourceVersion %s, want exactly %d", l.GetResourceVersion(), f.old)
	}
}

func wantAny(t *testing.T, f rvFixture, l *unstructured.UnstructuredList) {
	t.Helper()
	if rv := rvOf(t, l); rv <= 0 || rv > f.latest+100 || len(l.Items) == 0 {
		t.Fatalf("want some consistent state, got %v at %d", names(l), rv)
	}
}

func wantNotOlder(t *testing.T, f rvFixture, l *unstructured.UnstructuredList) {
	t.Helper()
	if rvOf(t, l) < f.old {
		t.Fatalf("list resourceVersion %s older than %d", l.GetResourceVersion(), f.old)
	}
}

type listCase struct {
	name     string
	opts     func(f rvFixture) ListOptions
	sentinel error // expected error, or nil
	code     int32
	check    func(t *testing.T, f rvFixture, l *unstructured.UnstructuredList)
}

var listCases = []listCase{
	// list, no limit, match unset
	{name: "no limit/unset: most recent", opts: func(f rvFixture) ListOptions { return ListOptions{} }, check: wantLatestState},
	{name: "no limit/0: any", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: "0"} }, check: wantAny},
	{name: "no limit/N: not older than N", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: f.rv(f.latest)} }, check: wantLatestState},
	{name: "no limit/N too large: 504", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: f.rv(f.latest + 1000)} }, sentinel: ErrTooLargeRV, code: http.StatusGatewayTimeout},
	// list, limit, match unset
	{name: "limit/unset: most recent", opts: func(f rvFixture) ListOptions { return ListOptions{Limit: 10} }, check: wantLatestState},
	{name: "limit/0: any", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: "0", Limit: 10} }, check: wantAny},
	{name: "limit/N: exact (legacy)", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: f.rv(f.old), Limit: 10} }, check: wantOldState},
	{name: "limit/N too large: 504", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: f.rv(f.latest + 1000), Limit: 10} }, sentinel: ErrTooLargeRV, code: http.StatusGatewayTimeout},
	// match=NotOlderThan
	{name: "NotOlderThan/unset: 422", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	}, sentinel: ErrInvalid, code: http.StatusUnprocessableEntity},
	{name: "NotOlderThan/0: any", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	}, check: wantAny},
	{name: "NotOlderThan/N: not older than N", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.old), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	}, check: wantNotOlder},
	{name: "NotOlderThan/N with limit: not older than N", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.old), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 10}
	}, check: wantNotOlder},
	{name: "NotOlderThan/N too large: 504", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.latest + 1000), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
	}, sentinel: ErrTooLargeRV, code: http.StatusGatewayTimeout},
	// match=Exact
	{name: "Exact/unset: 422", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	}, sentinel: ErrInvalid, code: http.StatusUnprocessableEntity},
	{name: "Exact/0: 422", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	}, sentinel: ErrInvalid, code: http.StatusUnprocessableEntity},
	{name: "Exact/N: exact N", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.old), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	}, check: wantOldState},
	{name: "Exact/N with limit: exact N", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.old), ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 10}
	}, check: wantOldState},
	{name: "Exact/N too large: 504", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.latest + 1000), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	}, sentinel: ErrTooLargeRV, code: http.StatusGatewayTimeout},
	// invalid combinations
	{name: "unsupported match: 422", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Newest"}
	}, sentinel: ErrInvalid, code: http.StatusUnprocessableEntity},
	{name: "match with continue: 422", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Continue: encodeContinue(f.old, "w1\x00")}
	}, sentinel: ErrInvalid, code: http.StatusUnprocessableEntity},
	{name: "sendInitialEvents on list: 422", opts: func(f rvFixture) ListOptions { t := true; return ListOptions{SendInitialEvents: &t} }, sentinel: ErrInvalid, code: http.StatusUnprocessableEntity},
	{name: "non-integer RV: 400", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: "abc"} }, sentinel: ErrBadRequest, code: http.StatusBadRequest},
	{name: "negative RV: 400", opts: func(f rvFixture) ListOptions { return ListOptions{ResourceVersion: "-5"} }, sentinel: ErrBadRequest, code: http.StatusBadRequest},
	// continue
	{name: "continue/unset: snapshot of the token", opts: func(f rvFixture) ListOptions { return ListOptions{Continue: encodeContinue(f.old, "w1\x00")} },
		check: func(t *testing.T, f rvFixture, l *unstructured.UnstructuredList) {
			if !slices.Equal(names(l), []string{"a/w2", "a/w3", "a/w4"}) || rvOf(t, l) != f.old {
				t.Fatalf("got %v at %s", names(l), l.GetResourceVersion())
			}
		}},
	{name: "continue/0: snapshot of the token (0 ignored)", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: "0", Continue: encodeContinue(f.old, "w1\x00")}
	}, check: func(t *testing.T, f rvFixture, l *unstructured.UnstructuredList) {
		if !slices.Equal(names(l), []string{"a/w2", "a/w3", "a/w4"}) || rvOf(t, l) != f.old {
			t.Fatalf("got %v at %s", names(l), l.GetResourceVersion())
		}
	}},
	{name: "continue/N: 400", opts: func(f rvFixture) ListOptions {
		return ListOptions{ResourceVersion: f.rv(f.old), Continue: encodeContinue(f.old, "w1\x00")}
	}, sentinel: ErrBadRequest, code: http.StatusBadRequest},
	{name: "continue not base64: 400", opts: func(f rvFixture) ListOptions { return ListOptions{Continue: "%%%"} }, sentinel: ErrBadRequest, code: http.StatusBadRequest},
	{name: "continue not JSON: 400", opts: func(f rvFixture) ListOptions { return ListOptions{Continue: "bm90IGpzb24"} }, sentinel: ErrBadRequest, code: http.StatusBadRequest},
	{name: "continue wrong version: 400", opts: func(f rvFixture) ListOptions {
		return ListOptions{Continue: "eyJ2Ijoic3RyYXRhLmRldi92MSIsInJ2IjozLCJzdGFydCI6IngifQ"}
	}, sentinel: ErrBadRequest, code: http.StatusBadRequest},
	{name: "continue start key out of the prefix: 400", opts: func(f rvFixture) ListOptions {
		return ListOptions{Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiIuLi94In0"}
	}, sentinel: ErrBadRequest, code: http.StatusBadRequest},
}

// TestListResourceVersionTable runs every list cell of the design's
// resourceVersion table against a real etcd.
func TestListResourceVersionTable(t *testing.T) {
	f := newRVFixture(t)
	for _, tc := range listCases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := f.s.List(context.Background(), "a", tc.opts(f))
			if tc.sentinel != nil {
				e := wantStatus(t, err, tc.sentinel, tc.code)
				checkStatusDetails(t, e)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, f, l)
		})
	}
}

// checkStatusDetails checks the details kube-apiserver puts in 422 and 504
// answers.
func checkStatusDetails(t *testing.T, e *Error) {
	t.Helper()
	st := e.Status()
	switch {
	case errors.Is(e, ErrInvalid):
		if st.Details == nil || st.Details.Group != "meta.k8s.io" || st.Details.Kind != "ListOptions" {
			t.Fatalf("422 details %+v, want group meta.k8s.io kind ListOptions", st.Details)
		}
	case errors.Is(e, ErrTooLargeRV):
		if st.Reason != metav1.StatusReasonTimeout || st.Details == nil || st.Details.RetryAfterSeconds != 1 ||
			len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
			t.Fatalf("504 status %+v", st)
		}
	}
}

type getCase struct {
	name     string
	rv       func(f rvFixture) string
	obj      string
	sentinel error
	code     int32
	wantSize int64
}

var getCases = []getCase{
	{name: "unset: most recent", rv: func(rvFixture) string { return "" }, obj: "w1", wantSize: 2},
	{name: "0: any", rv: func(rvFixture) string { return "0" }, obj: "w2", wantSize: 1},
	{name: "N: not older than N", rv: func(f rvFixture) string { return f.rv(f.latest) }, obj: "w1", wantSize: 2},
	{name: "N too large: 504", rv: func(f rvFixture) string { return f.rv(f.latest + 1000) }, obj: "w1", sentinel: ErrTooLargeRV, code: http.StatusGatewayTimeout},
	{name: "non-integer: 400", rv: func(rvFixture) string { return "1.5" }, obj: "w1", sentinel: ErrBadRequest, code: http.StatusBadRequest},
	{name: "unset: not found", rv: func(rvFixture) string { return "" }, obj: "nope", sentinel: ErrNotFound, code: http.StatusNotFound},
	{name: "0: not found", rv: func(rvFixture) string { return "0" }, obj: "nope", sentinel: ErrNotFound, code: http.StatusNotFound},
	{name: "bad name: 400", rv: func(rvFixture) string { return "" }, obj: "a%b", sentinel: ErrBadRequest, code: http.StatusBadRequest},
}

// TestGetResourceVersionTable runs the get row of the table.
func TestGetResourceVersionTable(t *testing.T) {
	f := newRVFixture(t)
	for _, tc := range getCases {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := f.s.Get(context.Background(), "a", tc.obj, GetOptions{ResourceVersion: tc.rv(f)})
			if tc.sentinel != nil {
				checkStatusDetails(t, wantStatus(t, err, tc.sentinel, tc.code))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if size(obj) != tc.wantSize || obj.GetName() != tc.obj {
				t.Fatalf("got %s size %d, want size %d", obj.GetName(), size(obj), tc.wantSize)
			}
		})
	}
}
