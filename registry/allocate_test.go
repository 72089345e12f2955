package registry

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// recorder is an Allocator that logs what happens to each allocation.
type recorder struct {
	log  []string
	fail bool
	n    int
}

func (r *recorder) begin(dryRun bool) (func(bool), error) {
	if r.fail {
		return nil, errors.New("refused")
	}
	r.n++
	name := string(rune('a' + r.n - 1))
	if dryRun {
		name += "(dry)"
	}
	r.log = append(r.log, "begin "+name)
	return func(ok bool) {
		if ok {
			r.log = append(r.log, "commit "+name)
		} else {
			r.log = append(r.log, "revert "+name)
		}
	}, nil
}

func (r *recorder) BeginCreate(_ context.Context, _ runtime.Object, dryRun bool) (func(bool), error) {
	return r.begin(dryRun)
}

func (r *recorder) BeginUpdate(_ context.Context, _, _ runtime.Object, dryRun bool) (func(bool), error) {
	return r.begin(dryRun)
}

func (r *recorder) Release(runtime.Object) { r.log = append(r.log, "release") }

// TestAllocation: a write's allocation is committed or reverted once, and a
// preparation repeated after a lost race reverts the one it replaces.
func TestAllocation(t *testing.T) {
	const svc = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`
	cases := []struct {
		name    string
		dryRun  bool
		fail    bool
		prepare int  // preparations (a guaranteed update retries)
		stored  bool // the write succeeded
		want    []string
	}{
		{name: "stored", prepare: 1, stored: true, want: []string{"begin a", "commit a"}},
		{name: "store failed", prepare: 1, want: []string{"begin a", "revert a"}},
		{name: "retried", prepare: 2, stored: true, want: []string{"begin a", "revert a", "begin b", "commit b"}},
		{name: "dry run", dryRun: true, prepare: 1, stored: true, want: []string{"begin a(dry)", "commit a(dry)"}},
		{name: "refused", fail: true, prepare: 1, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := kindOf(t, "services")
			rec := &recorder{fail: tc.fail}
			k.SetAllocator(rec)
			ctx, alloc := WithAllocation(k.Context(context.Background(), "default", "create", "", nil), tc.dryRun)
			for range tc.prepare {
				obj, _, err := k.Decode([]byte(svc), FieldValidationStrict)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := k.PrepareCreate(ctx, obj, nil); (err != nil) != tc.fail {
					t.Fatalf("prepare: %v", err)
				}
			}
			alloc.Finish(tc.stored)
			alloc.Finish(!tc.stored) // only the first counts
			if !slices.Equal(rec.log, tc.want) {
				t.Errorf("got %q, want %q", rec.log, tc.want)
			}
		})
	}
}

// TestAllocationRequired: a kind with an allocator is not prepared outside
// WithAllocation (nothing would finish what it allocates).
func TestAllocationRequired(t *testing.T) {
	k := kindOf(t, "services")
	k.SetAllocator(&recorder{})
	obj, _, err := k.Decode([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`),
		FieldValidationStrict)
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.PrepareCreate(k.Context(context.Background(), "default", "create", "", nil), obj, nil)
	if !apierrors.IsInternalError(err) {
		t.Errorf("got %v, want an internal error", err)
	}
}
