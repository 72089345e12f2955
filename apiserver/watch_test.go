package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func TestWatchEvents(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	pre := mustCreateConfigMap(t, cms, "pre", nil, nil)
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Without a resourceVersion the watch starts with the current state.
	ev := nextEvent(t, w, 5*time.Second)
	if got := eventString(t, ev); got != "ADDED pre" || metaOf(t, ev.Object).GetResourceVersion() != pre.ResourceVersion {
		t.Errorf("first event %s at %s, want ADDED pre at %s", got, metaOf(t, ev.Object).GetResourceVersion(), pre.ResourceVersion)
	}
	created := mustCreateConfigMap(t, cms, "w", map[string]string{"n": "1"}, nil)
	upd := created.DeepCopy()
	upd.Data["n"] = "2"
	updated, err := cms.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED w", "MODIFIED w", "DELETED w"}
	var lastRV int64
	for i, wantEv := range want {
		ev := nextEvent(t, w, 5*time.Second)
		if got := eventString(t, ev); got != wantEv {
			t.Fatalf("event %d = %s, want %s", i, got, wantEv)
		}
		cm := ev.Object.(*corev1.ConfigMap)
		rv := rvInt(t, cm.ResourceVersion)
		if rv <= lastRV {
			t.Errorf("event %d resourceVersion %d not after %d", i, rv, lastRV)
		}
		lastRV = rv
		switch i {
		case 0:
			if cm.ResourceVersion != created.ResourceVersion || cm.Data["n"] != "1" {
				t.Errorf("ADDED: rv %s n %q, want %s 1", cm.ResourceVersion, cm.Data["n"], created.ResourceVersion)
			}
		case 1:
			if cm.ResourceVersion != updated.ResourceVersion || cm.Data["n"] != "2" {
				t.Errorf("MODIFIED: rv %s n %q, want %s 2", cm.ResourceVersion, cm.Data["n"], updated.ResourceVersion)
			}
		case 2:
			if cm.Data["n"] != "2" {
				t.Errorf("DELETED carries n=%q, want the last state n=2", cm.Data["n"])
			}
		}
	}
	// A label-selected watch: leaving the selector is DELETED, entering ADDED.
	sw, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "sel=yes", ResourceVersion: strconv.FormatInt(lastRV, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	s := mustCreateConfigMap(t, cms, "s", nil, map[string]string{"sel": "yes"})
	s.Labels = map[string]string{"sel": "no"}
	if s, err = cms.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Labels = map[string]string{"sel": "yes"}
	if _, err = cms.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, wantEv := range []string{"ADDED s", "DELETED s", "ADDED s"} {
		if got := eventString(t, nextEvent(t, sw, 5*time.Second)); got != wantEv {
			t.Errorf("selected watch event %d = %s, want %s", i, got, wantEv)
		}
	}
}

func TestWatchFromResourceVersion(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	a := mustCreateConfigMap(t, cms, "a", nil, nil)
	b := mustCreateConfigMap(t, cms, "b", nil, nil)
	a2 := a.DeepCopy()
	a2.Data = map[string]string{"x": "y"}
	a2, err := cms.Update(ctx, a2, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		from string
		want []string
	}{
		{a.ResourceVersion, []string{"ADDED b", "MODIFIED a", "DELETED b"}},
		{b.ResourceVersion, []string{"MODIFIED a", "DELETED b"}},
		{a2.ResourceVersion, []string{"DELETED b"}},
	}
	for _, tc := range tests {
		t.Run("from "+tc.from, func(t *testing.T) {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: tc.from})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for i, want := range tc.want {
				if got := eventString(t, nextEvent(t, w, 5*time.Second)); got != want {
					t.Errorf("event %d = %s, want %s", i, got, want)
				}
			}
			// Nothing more until the next change.
			select {
			case ev := <-w.ResultChan():
				t.Errorf("unexpected event %s", eventString(t, ev))
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
	// A watch from a resourceVersion the store has not reached waits for it.
	future := strconv.FormatInt(etcdRevision(t)+1, 10)
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: future})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreateConfigMap(t, cms, "c", nil, nil) // at future (or later: other tests write too)
	mustCreateConfigMap(t, cms, "d", nil, nil)
	if got := eventString(t, nextEvent(t, w, 5*time.Second)); got != "ADDED d" && got != "ADDED c" {
		t.Errorf("watch from a future resourceVersion: %s, want ADDED c or d", got)
	}
}

func TestWatchSendInitialEvents(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	var last *corev1.ConfigMap
	for _, n := range []string{"c", "a", "b"} {
		last = mustCreateConfigMap(t, cms, n, nil, nil)
	}
	// Make sure the watch cache has seen all three (RV "0" reads it as it is).
	if _, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: last.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}); err != nil {
		t.Fatal(err)
	}
	for i, rv := range []string{"", "0", last.ResourceVersion} {
		t.Run("rv="+rv, func(t *testing.T) {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, SendInitialEvents: ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []string
			var bookmark watch.Event
			for range 4 {
				bookmark = nextEvent(t, w, 5*time.Second)
				got = append(got, eventString(t, bookmark))
			}
			if diff := cmp.Diff([]string{"ADDED a", "ADDED b", "ADDED c", "BOOKMARK"}, got); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			bm := metaOf(t, bookmark.Object)
			if bm.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || rvInt(t, bm.GetResourceVersion()) < rvInt(t, last.ResourceVersion) {
				t.Errorf("bookmark at %s with annotations %v, want k8s.io/initial-events-end=true not older than %s",
					bm.GetResourceVersion(), bm.GetAnnotations(), last.ResourceVersion)
			}
			// Then changes (an update, so that the next case sees the same names).
			a, err := cms.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a.Data = map[string]string{"case": strconv.Itoa(i)}
			if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			ev := nextEvent(t, w, 5*time.Second)
			if got := eventString(t, ev); got != "MODIFIED a" || ev.Object.(*corev1.ConfigMap).Data["case"] != strconv.Itoa(i) {
				t.Errorf("after the bookmark: %s %v, want MODIFIED a with case=%d", got, ev.Object, i)
			}
		})
	}
	// The bookmark itself: kind, apiVersion, resourceVersion and the annotation only.
	res := rawCall(t, ts, http.MethodGet, "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1", nil, nil)
	lines := strings.Split(strings.TrimSpace(string(res.body)), "\n")
	if res.code != 200 || len(lines) < 4 {
		t.Fatalf("raw watch: %d\n%s", res.code, res.body)
	}
	var bm struct {
		Type   string
		Object map[string]any
	}
	if err := json.Unmarshal([]byte(lines[3]), &bm); err != nil {
		t.Fatal(err)
	}
	rv, _, _ := unstructured.NestedString(bm.Object, "metadata", "resourceVersion")
	want := map[string]any{"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{
		"resourceVersion": rv, "annotations": map[string]any{"k8s.io/initial-events-end": "true"}}}
	if bm.Type != "BOOKMARK" || rvInt(t, rv) < rvInt(t, last.ResourceVersion) {
		t.Errorf("fourth event %s at %s, want a BOOKMARK not older than %s", bm.Type, rv, last.ResourceVersion)
	}
	if diff := cmp.Diff(want, bm.Object); diff != "" {
		t.Errorf("bookmark object (-want +got):\n%s", diff)
	}
}

func TestWatchTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cms := ts.client.CoreV1().ConfigMaps("default")
	for _, bookmarks := range []bool{false, true} {
		t.Run(fmt.Sprintf("bookmarks=%v", bookmarks), func(t *testing.T) {
			start := time.Now()
			w, err := cms.Watch(context.Background(), metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1), AllowWatchBookmarks: bookmarks})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var events []string
			deadline := time.After(5 * time.Second)
		loop:
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						break loop
					}
					events = append(events, eventString(t, ev))
				case <-deadline:
					t.Fatalf("the watch did not end within 5s of its 1s timeout (events %v)", events)
				}
			}
			if d := time.Since(start); d < 900*time.Millisecond {
				t.Errorf("the watch ended after %v, before its 1s timeout", d)
			}
			for _, e := range events {
				if e != "BOOKMARK" || !bookmarks {
					t.Errorf("unexpected event %s", e)
				}
			}
		})
	}
}

// TestWatchNegativeTimeout: a watch with a negative timeoutSeconds ends at
// once with an empty stream, as kube-apiserver's timer fires at once; 0 is
// the server's default timeout, as unset.
func TestWatchNegativeTimeout(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.http.URL+cmPath+"?watch=true&timeoutSeconds=-5", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []json.RawMessage
	dec := json.NewDecoder(resp.Body)
	for {
		var ev json.RawMessage
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				t.Fatalf("the watch did not end: %v", err)
			}
			break
		}
		events = append(events, ev)
	}
	if resp.StatusCode != 200 || len(events) != 0 {
		t.Errorf("%s with %d events, want 200 and none", resp.Status, len(events))
	}
}
