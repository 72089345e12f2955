package storage

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

func startWatch(t *testing.T, s *Store, ns string, opts ListOptions) watch.Interface {
	t.Helper()
	w, err := s.Watch(context.Background(), ns, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

// expect reads the next event and checks its type and object name ("" for
// bookmarks); it returns the object.
func expect(t *testing.T, w watch.Interface, typ watch.EventType, name string) *unstructured.Unstructured {
	t.Helper()
	ev := nextEvent(t, w)
	obj, _ := ev.Object.(*unstructured.Unstructured)
	if ev.Type != typ || (obj != nil && obj.GetName() != name) {
		t.Fatalf("got %s %v, want %s %q", ev.Type, ev.Object, typ, name)
	}
	return obj
}

func wantEnded(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("want the end of the watch, got %s %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not end within 10s")
	}
}

func ptr[T any](v T) *T { return &v }

// TestWatchStartModes covers the watch rows of the resourceVersion table.
func TestWatchStartModes(t *testing.T) {
	cases := []struct {
		name    string
		opts    func(first, latest int64) ListOptions
		initial []string // ADDED events expected first
		endMark bool     // initial-events-end bookmark expected after them
	}{
		{name: "unset: state at most recent, then changes", opts: func(_, _ int64) ListOptions { return ListOptions{} }, initial: []string{"w1", "w2"}},
		{name: "0: state at any RV, then changes", opts: func(_, _ int64) ListOptions { return ListOptions{ResourceVersion: "0"} }, initial: []string{"w1", "w2"}},
		{name: "N: changes after N", opts: func(first, _ int64) ListOptions { return ListOptions{ResourceVersion: fmt.Sprint(first)} }, initial: []string{"w2"}},
		{name: "N=latest: no initial events", opts: func(_, latest int64) ListOptions { return ListOptions{ResourceVersion: fmt.Sprint(latest)} }},
		{name: "sendInitialEvents/unset", opts: func(_, _ int64) ListOptions {
			return ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
		}, initial: []string{"w1", "w2"}, endMark: true},
		{name: "sendInitialEvents/0", opts: func(_, _ int64) ListOptions {
			return ListOptions{ResourceVersion: "0", SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
		}, initial: []string{"w1", "w2"}, endMark: true},
		{name: "sendInitialEvents/N", opts: func(_, latest int64) ListOptions {
			return ListOptions{ResourceVersion: fmt.Sprint(latest), SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
		}, initial: []string{"w1", "w2"}, endMark: true},
		{name: "sendInitialEvents without bookmarks: no initial-events-end bookmark", opts: func(_, _ int64) ListOptions {
			return ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
		}, initial: []string{"w1", "w2"}},
		{name: "sendInitialEvents=false/N: changes after N", opts: func(first, _ int64) ListOptions {
			return ListOptions{ResourceVersion: fmt.Sprint(first), SendInitialEvents: ptr(false), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
		}, initial: []string{"w2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			first := rvOf(t, mustCreate(t, s, widget("n", "w1", nil)))
			latest := rvOf(t, mustCreate(t, s, widget("n", "w2", nil)))
			opts := tc.opts(first, latest)
			if opts.ResourceVersion == "0" { // "any" may be stale: let the cache catch up
				if err := s.cache.waitRevision(context.Background(), latest, 0); err != nil {
					t.Fatal(err)
				}
			}
			w := startWatch(t, s, "n", opts)
			for _, n := range tc.initial {
				expect(t, w, watch.Added, n)
			}
			if tc.endMark {
				b := expect(t, w, watch.Bookmark, "")
				if b.GetAnnotations()[InitialEventsAnnotation] != "true" || rvOf(t, b) < latest {
					t.Fatalf("initial-events-end bookmark %v", b.Object)
				}
			}
			followChanges(t, s, w)
		})
	}
}

// followChanges writes and checks that the watch reports each change.
func followChanges(t *testing.T, s *Store, w watch.Interface) {
	t.Helper()
	created := mustCreate(t, s, widget("n", "w3", nil))
	if got := expect(t, w, watch.Added, "w3"); got.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("ADDED at %s, want %s", got.GetResourceVersion(), created.GetResourceVersion())
	}
	setSize(t, s, "n", "w1", 5)
	if got := expect(t, w, watch.Modified, "w1"); size(got) != 5 {
		t.Fatalf("MODIFIED size %d", size(got))
	}
	if _, err := s.Delete(context.Background(), "n", "w2", nil); err != nil {
		t.Fatal(err)
	}
	expect(t, w, watch.Deleted, "w2")
}

// TestWatchFutureRV: a watch from a revision not yet reached waits for it.
func TestWatchFutureRV(t *testing.T) {
	s := newTestStore(t)
	rv := rvOf(t, mustCreate(t, s, widget("n", "w0", nil)))
	w := startWatch(t, s, "n", ListOptions{ResourceVersion: fmt.Sprint(rv + 2)})
	for i := 1; i <= 3; i++ {
		mustCreate(t, s, widget("n", fmt.Sprintf("w%d", i), nil))
	}
	if got := expect(t, w, watch.Added, "w3"); rvOf(t, got) != rv+3 {
		t.Fatalf("first event at %s, want %d", got.GetResourceVersion(), rv+3)
	}
}

// TestWatchExpiredAfterCompaction: once etcd compacts past N, a watch from N
// is one ERROR event with 410 Expired, then the end.
func TestWatchExpiredAfterCompaction(t *testing.T) {
	s := newTestStore(t)
	old := rvOf(t, mustCreate(t, s, widget("n", "w1", nil)))
	now := rvOf(t, mustCreate(t, s, widget("n", "w2", nil)))
	if err := Compact(context.Background(), testClient, now); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache to learn of the compaction", func() bool {
		w, err := s.Watch(context.Background(), "n", ListOptions{ResourceVersion: fmt.Sprint(old)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var ev watch.Event
		select {
		case e, open := <-w.ResultChan():
			if !open {
				// The compaction can cancel the cache's own etcd watch if
				// it had not yet passed the compacted revision; the cache
				// then re-lists and ends its watchers, as a client would see
				// it. Watch again.
				return false
			}
			ev = e
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event within 10s")
		}
		if ev.Type != watch.Error {
			return false
		}
		st, ok := ev.Object.(*metav1.Status)
		if !ok || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
			t.Fatalf("ERROR event %v, want 410 Expired", ev.Object)
		}
		wantEnded(t, w)
		return true
	})
}

// TestWatchBookmarks: with allowWatchBookmarks, a BOOKMARK carrying only
// kind, apiVersion and resourceVersion follows the revision when other types
// are written.
func TestWatchBookmarks(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.BookmarkInterval = 100 * time.Millisecond })
	other := newTestStore(t)
	mustCreate(t, s, widget("n", "w1", nil))
	w := startWatch(t, s, "n", ListOptions{AllowWatchBookmarks: true})
	expect(t, w, watch.Added, "w1")
	rv := rvOf(t, mustCreate(t, other, widget("n", "elsewhere", nil)))
	for {
		b := expect(t, w, watch.Bookmark, "")
		if len(b.Object) != 3 || b.GetAPIVersion() != "example.com/v1" || b.GetKind() != "Widget" {
			t.Fatalf("bookmark carries more than kind, apiVersion, metadata: %v", b.Object)
		}
		if meta := b.Object["metadata"].(map[string]any); len(meta) != 1 {
			t.Fatalf("bookmark metadata %v", meta)
		}
		if rvOf(t, b) >= rv {
			return
		}
	}
}

// TestWatchBookmarkBeforeTimeout: a watch with a timeout gets a bookmark
// shortly before it ends, even if the periodic interval is long.
func TestWatchBookmarkBeforeTimeout(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.BookmarkInterval = time.Hour })
	mustCreate(t, s, widget("n", "w1", nil))
	start := time.Now()
	w := startWatch(t, s, "n", ListOptions{AllowWatchBookmarks: true, Timeout: 2 * time.Second})
	expect(t, w, watch.Added, "w1")
	expect(t, w, watch.Bookmark, "")
	if d := time.Since(start); d >= 2*time.Second {
		t.Fatalf("bookmark after %s, want before the 2s timeout", d)
	}
	wantEnded(t, w)
}

// TestWatchSelectors: leaving the selector is DELETED with the previous
// content, entering it is ADDED; field selectors on name and namespace.
func TestWatchSelectors(t *testing.T) {
	s := newTestStore(t)
	red := labels.SelectorFromSet(labels.Set{"color": "red"})
	w := startWatch(t, s, "", ListOptions{ResourceVersion: "0", Label: red})
	byName := startWatch(t, s, "", ListOptions{ResourceVersion: "0", Field: fields.OneTermEqualSelector("metadata.name", "x")})
	byNS := startWatch(t, s, "", ListOptions{ResourceVersion: "0", Field: fields.OneTermEqualSelector("metadata.namespace", "other")})
	ctx := context.Background()
	mustCreate(t, s, widget("n", "x", map[string]string{"color": "blue"}))
	relabel := func(color string) {
		_, err := s.GuaranteedUpdate(ctx, "n", "x", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			cur.SetLabels(map[string]string{"color": color})
			return cur, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	relabel("red")
	expect(t, w, watch.Added, "x")
	setSize(t, s, "n", "x", 3)
	expect(t, w, watch.Modified, "x")
	relabel("green")
	left := expect(t, w, watch.Deleted, "x")
	if left.GetLabels()["color"] != "red" || size(left) != 3 {
		t.Fatalf("DELETED on leaving carries %v, want the previous content", left.Object)
	}
	mustCreate(t, s, widget("other", "y", map[string]string{"color": "red"}))
	expect(t, w, watch.Added, "y")
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Modified, watch.Modified} {
		expect(t, byName, typ, "x")
	}
	expect(t, byNS, watch.Added, "y")
}

// TestWatchNamespace: a namespaced watch sees only its namespace.
func TestWatchNamespace(t *testing.T) {
	s := newTestStore(t)
	w := startWatch(t, s, "mine", ListOptions{ResourceVersion: "0"})
	mustCreate(t, s, widget("theirs", "a", nil))
	mustCreate(t, s, widget("mine", "b", nil))
	expect(t, w, watch.Added, "b")
}

// TestWatchOptionErrors: invalid watch options are refused before any event.
func TestWatchOptionErrors(t *testing.T) {
	s := newTestStore(t)
	nto := metav1.ResourceVersionMatchNotOlderThan
	cases := map[string]struct {
		opts     ListOptions
		sentinel error
		code     int32
	}{
		"sendInitialEvents without match": {ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true}, ErrInvalid, 422},
		"match without sendInitialEvents": {ListOptions{ResourceVersion: "5", ResourceVersionMatch: nto}, ErrInvalid, 422},
		"Exact match":                     {ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact, SendInitialEvents: ptr(true)}, ErrInvalid, 422},
		"non-integer RV":                  {ListOptions{ResourceVersion: "x"}, ErrBadRequest, 400}, // kube-apiserver: 500
		"continue":                        {ListOptions{Continue: "abc"}, ErrBadRequest, 400},
		"unsupported field selector":      {ListOptions{Field: fields.OneTermEqualSelector("spec.size", "1")}, ErrBadRequest, 400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := s.Watch(context.Background(), "", tc.opts)
			wantStatus(t, err, tc.sentinel, tc.code)
		})
	}
}

// TestWatchNext: a watch read through Next, in the reader's goroutine (as
// the API server reads it), delivers the state and the changes, and ends
// with the reader's context, the watch's timeout or Stop, each time
// leaving the cache's watchers.
func TestWatchNext(t *testing.T) {
	s := newTestStore(t)
	latest := rvOf(t, mustCreate(t, s, widget("n", "w1", nil)))
	if err := s.cache.waitRevision(context.Background(), latest, 0); err != nil {
		t.Fatal(err)
	}
	pulled := func(opts ListOptions) *cacheWatcher {
		w, err := s.Watch(context.Background(), "n", opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w.(*cacheWatcher)
	}
	next := func(w *cacheWatcher, ctx context.Context, typ watch.EventType, name string) {
		t.Helper()
		ev, ok := w.Next(ctx)
		obj, _ := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type != typ || obj.GetName() != name {
			t.Fatalf("Next = %s %v, %t; want %s %q", ev.Type, ev.Object, ok, typ, name)
		}
	}
	ended := func(w *cacheWatcher, ctx context.Context) {
		t.Helper()
		if ev, ok := w.Next(ctx); ok {
			t.Fatalf("Next = %s %v, want the end", ev.Type, ev.Object)
		}
		s.cache.mu.Lock()
		_, still := s.cache.watchers[w.id]
		s.cache.mu.Unlock()
		if still {
			t.Fatal("an ended watch is still among the cache's watchers")
		}
	}
	bg := context.Background()

	t.Run("context", func(t *testing.T) {
		w := pulled(ListOptions{ResourceVersion: "0"})
		next(w, bg, watch.Added, "w1")
		mustCreate(t, s, widget("n", "w2", nil))
		next(w, bg, watch.Added, "w2")
		ctx, cancel := context.WithCancel(bg)
		time.AfterFunc(50*time.Millisecond, cancel)
		ended(w, ctx)
		ended(w, bg) // and stays ended
	})
	t.Run("timeout", func(t *testing.T) {
		w := pulled(ListOptions{ResourceVersion: fmt.Sprint(s.cache.revision()), Timeout: 100 * time.Millisecond})
		ended(w, bg)
	})
	t.Run("stop", func(t *testing.T) {
		w := pulled(ListOptions{ResourceVersion: fmt.Sprint(s.cache.revision())})
		time.AfterFunc(50*time.Millisecond, w.Stop)
		ended(w, bg)
	})
}
