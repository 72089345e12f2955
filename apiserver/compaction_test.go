package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestCompactionExpired compacts the shared etcd for real and checks the
// 410 answers: a watch from a compacted resourceVersion (an ERROR event
// carrying the Status), an exact list at it, and a continue token from
// before the compaction. It is not parallel: it compacts under every server.
func TestCompactionExpired(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	old := mustCreateConfigMap(t, cms, "old", map[string]string{"n": "0"}, nil)
	for i := range 3 {
		mustCreateConfigMap(t, cms, fmt.Sprintf("page-%d", i), nil, nil)
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v", err)
	}
	cur := old.DeepCopy()
	for i := 1; i <= 3; i++ {
		cur.Data["n"] = strconv.Itoa(i)
		if cur, err = cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	compacted := compactNow(t)
	t.Logf("compacted at %d; old resourceVersion %s", compacted, old.ResourceVersion)

	// An exact list at a compacted revision: 410 Expired.
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	checkStatusErr(t, err, statusWant{code: 410, reason: metav1.StatusReasonExpired,
		message: "The resourceVersion for the provided list is too old."})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("IsResourceExpired(%v) = false", err)
	}

	// A continue token from before: 410 with an inconsistent token that goes on.
	res := rawCall(t, ts, http.MethodGet, "/api/v1/namespaces/default/configmaps?limit=2&continue="+first.Continue, nil, nil)
	st := parseStatusBody(t, res.body)
	checkStatus(t, st, statusWant{code: 410, reason: metav1.StatusReasonExpired,
		message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."})
	if res.code != 410 || st.Continue == "" {
		t.Fatalf("HTTP %d, continue %q; want 410 with an inconsistent continue token", res.code, st.Continue)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: st.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"page-1", "page-2"}, listNames(t, rest)); diff != "" {
		t.Errorf("inconsistent continuation (-want +got):\n%s", diff)
	}

	// A watch from a compacted revision: an ERROR event with the 410 Status,
	// then the end. The cache learns of the compaction through
	// compact_rev_key, asynchronously: retry briefly.
	eventually(t, 5*time.Second, func() string {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
		if err != nil {
			return err.Error()
		}
		defer w.Stop()
		ev := nextEvent(t, w, 5*time.Second)
		if ev.Type != watch.Error {
			return fmt.Sprintf("first event %s, want ERROR", eventString(t, ev))
		}
		st, ok := ev.Object.(*metav1.Status)
		if !ok {
			t.Fatalf("ERROR event object %T, want *metav1.Status", ev.Object)
		}
		checkStatus(t, *st, statusWant{code: 410, reason: metav1.StatusReasonExpired,
			prefix: fmt.Sprintf("too old resource version: %s (", old.ResourceVersion)})
		if !apierrors.IsResourceExpired(apierrors.FromObject(st)) {
			t.Errorf("FromObject(%v) is not ResourceExpired", st)
		}
		select {
		case ev, ok := <-w.ResultChan():
			if ok {
				t.Errorf("event after the ERROR: %s", eventString(t, ev))
			}
		case <-time.After(5 * time.Second):
			t.Error("the watch did not end after its ERROR event")
		}
		return ""
	})
	// The newest state is still readable and watchable.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cur.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreateConfigMap(t, cms, "after", nil, nil)
	if got := eventString(t, nextEvent(t, w, 5*time.Second)); got != "ADDED after" {
		t.Errorf("watch from the newest resourceVersion: %s, want ADDED after", got)
	}
}
