package apiserver

// Informer tests: client-go's shared informers against the server, in
// both of the reflector's start modes (WatchList, i.e. a watch with
// sendInitialEvents, and the classic list-then-watch), and their recovery
// through a relist when a real compaction expires their resourceVersion.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// observedServer serves the test server's handler on its own listener,
// records the configmap requests it receives, and can hold new requests
// (pause) and cut every connection, to steer an informer's watches.
type observedServer struct {
	http   *httptest.Server
	client kubernetes.Interface

	mu      sync.Mutex
	queries []url.Values // configmap requests, in arrival order
	paused  chan struct{}
	waiting int
}

func newObservedServer(t *testing.T, ts *testServer) *observedServer {
	o := &observedServer{}
	handler := ts.api.Handler()
	o.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		gate := o.paused
		if gate != nil {
			o.waiting++
		}
		o.mu.Unlock()
		if gate != nil {
			<-gate
			o.mu.Lock()
			o.waiting--
			o.mu.Unlock()
		}
		if strings.HasSuffix(r.URL.Path, "/configmaps") {
			o.mu.Lock()
			o.queries = append(o.queries, r.URL.Query())
			o.mu.Unlock()
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(o.http.Close)
	t.Cleanup(o.resume) // before Close: held requests must finish
	o.client = kubernetes.NewForConfigOrDie(&rest.Config{Host: o.http.URL, QPS: -1})
	return o
}

// pause holds every new request until resume.
func (o *observedServer) pause() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.paused == nil {
		o.paused = make(chan struct{})
	}
}

func (o *observedServer) resume() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.paused != nil {
		close(o.paused)
		o.paused = nil
	}
}

func (o *observedServer) held() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting
}

// requests describes the recorded configmap requests from index from on:
// "watch rv=… initial" for a watch with sendInitialEvents, "watch rv=…"
// for a plain watch, "list rv=…" for a list.
func (o *observedServer) requests(from int) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, q := range o.queries[min(from, len(o.queries)):] {
		s := "list"
		if q.Get("watch") == "true" || q.Get("watch") == "1" {
			s = "watch"
		}
		s += " rv=" + q.Get("resourceVersion")
		if q.Get("sendInitialEvents") == "true" {
			s += " initial"
		}
		out = append(out, s)
	}
	return out
}

func (o *observedServer) requestCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queries)
}

// handlerLog records informer notifications as "add name", "update name
// data", "delete name".
type handlerLog struct {
	mu     sync.Mutex
	events []string
}

func (h *handlerLog) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, s)
}

func (h *handlerLog) snapshot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

func dataString(cm *corev1.ConfigMap) string {
	var parts []string
	for k, v := range cm.Data {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (h *handlerLog) funcs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { h.add("add " + obj.(*corev1.ConfigMap).Name) },
		UpdateFunc: func(_, obj any) {
			cm := obj.(*corev1.ConfigMap)
			h.add(fmt.Sprintf("update %s %s", cm.Name, dataString(cm)))
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			h.add("delete " + obj.(*corev1.ConfigMap).Name)
		},
	}
}

// waitFor waits until every wanted notification has been seen.
func (h *handlerLog) waitFor(t *testing.T, timeout time.Duration, want ...string) {
	t.Helper()
	eventually(t, timeout, func() string {
		got := h.snapshot()
		for _, w := range want {
			if !slices.Contains(got, w) {
				return fmt.Sprintf("handler never saw %q; saw %q", w, got)
			}
		}
		return ""
	})
}

// startInformer starts a shared informer factory for configmaps in
// "default" on client and waits for it to sync.
func startInformer(t *testing.T, client kubernetes.Interface, log *handlerLog) cache.SharedIndexInformer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(log.funcs()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	syncCtx, syncCancel := context.WithTimeout(ctx, 10*time.Second)
	defer syncCancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	return inf
}

// TestInformerWatchListDefault records that client-go v0.37 starts
// reflectors with WatchList (a watch with sendInitialEvents) by default:
// WatchListClient is beta and on since 1.35 (k8s.io/client-go/features).
func TestInformerWatchListDefault(t *testing.T) {
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
		t.Errorf("client-go's WatchListClient is off by default; the tests expected it on")
	}
}

func TestInformer(t *testing.T) {
	tests := []struct {
		name      string
		watchList bool
		// wantStart: prefixes of the reflector's first requests.
		wantStart []string
	}{
		{"watchlist", true, []string{"watch rv= initial"}},
		{"list", false, []string{"list rv=0", "watch rv="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.watchList)
			ts := newTestServer(t)
			ctx := context.Background()
			cms := ts.client.CoreV1().ConfigMaps("default")
			pre := mustCreateConfigMap(t, cms, "pre", map[string]string{"n": "0"}, nil)
			mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("kube-system"), "elsewhere", nil, nil)
			obs := newObservedServer(t, ts)
			log := &handlerLog{}
			inf := startInformer(t, obs.client, log)

			// Handlers are notified asynchronously, also after a sync.
			log.waitFor(t, 5*time.Second, "add pre")
			if got := log.snapshot(); !slices.Equal(got, []string{"add pre"}) {
				t.Errorf("after sync the handler saw %q, want [add pre]", got)
			}
			if keys := inf.GetStore().ListKeys(); !slices.Equal(keys, []string{"default/pre"}) {
				t.Errorf("store keys %v, want [default/pre]", keys)
			}
			if rv := inf.LastSyncResourceVersion(); rvInt(t, rv) < rvInt(t, pre.ResourceVersion) {
				t.Errorf("LastSyncResourceVersion %s older than pre's %s", rv, pre.ResourceVersion)
			}

			a := mustCreateConfigMap(t, cms, "a", map[string]string{"n": "1"}, nil)
			log.waitFor(t, 5*time.Second, "add a")
			a.Data["n"] = "2"
			if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			log.waitFor(t, 5*time.Second, "update a n=2")
			if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			log.waitFor(t, 5*time.Second, "delete a")
			if diff := slices.Compare(log.snapshot(), []string{"add pre", "add a", "update a n=2", "delete a"}); diff != 0 {
				t.Errorf("handler saw %q, want [add pre, add a, update a n=2, delete a]", log.snapshot())
			}
			if keys := inf.GetStore().ListKeys(); !slices.Equal(keys, []string{"default/pre"}) {
				t.Errorf("store keys %v, want [default/pre]", keys)
			}

			// How the informer started.
			got := obs.requests(0)
			if len(got) < len(tc.wantStart) {
				t.Errorf("requests %q, want them to start with %q", got, tc.wantStart)
			} else {
				for i, prefix := range tc.wantStart {
					if !strings.HasPrefix(got[i], prefix) {
						t.Errorf("requests %q, want them to start with %q", got, tc.wantStart)
						break
					}
				}
			}
			if tc.watchList && slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "list") }) {
				t.Errorf("requests %q: WatchList should need no list", got)
			}
		})
	}
}

// TestInformerRelistAfterCompaction cuts an informer's watch, holds its
// re-watch while objects change and etcd is compacted past the informer's
// resourceVersion, then lets it through: the re-watch gets 410 Expired,
// the reflector relists (WatchList or list), its handlers see what changed
// meanwhile, and later changes still arrive. Not parallel: it compacts.
func TestInformerRelistAfterCompaction(t *testing.T) {
	tests := []struct {
		name      string
		watchList bool
		relist    string // the request that refills the cache after the 410
	}{
		{"watchlist", true, "watch rv=%s initial"},
		{"list", false, "list rv=%s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.watchList)
			ts := newTestServer(t)
			ctx := context.Background()
			cms := ts.client.CoreV1().ConfigMaps("default")
			a := mustCreateConfigMap(t, cms, "a", map[string]string{"n": "1"}, nil)
			mustCreateConfigMap(t, cms, "c", nil, nil)
			obs := newObservedServer(t, ts)
			log := &handlerLog{}
			inf := startInformer(t, obs.client, log)
			log.waitFor(t, 5*time.Second, "add a", "add c")
			// A watch shorter than a second counts as failed in client-go:
			// let this one last.
			time.Sleep(1100 * time.Millisecond)
			lastRV := inf.LastSyncResourceVersion()

			obs.pause()
			before := obs.requestCount()
			obs.http.CloseClientConnections()
			eventually(t, 10*time.Second, func() string {
				if obs.held() == 0 {
					return "the informer did not try to watch again"
				}
				return ""
			})

			// Changes the informer misses, then a compaction past its resourceVersion.
			a.Data["n"] = "2"
			if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			mustCreateConfigMap(t, cms, "b", nil, nil)
			if err := cms.Delete(ctx, "c", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			compactNow(t)
			// Wait until the server answers a watch from lastRV with 410.
			eventually(t, 5*time.Second, func() string {
				w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: lastRV})
				if err != nil {
					return err.Error()
				}
				defer w.Stop()
				if ev := nextEvent(t, w, 5*time.Second); ev.Type != watch.Error {
					return fmt.Sprintf("watch from %s: %s, want ERROR", lastRV, eventString(t, ev))
				}
				return ""
			})
			obs.resume()

			log.waitFor(t, 15*time.Second, "update a n=2", "add b", "delete c")
			if keys := inf.GetStore().ListKeys(); !slices.Equal(sortedCopy(keys), []string{"default/a", "default/b"}) {
				t.Errorf("store keys %v, want [default/a default/b]", keys)
			}
			mustCreateConfigMap(t, cms, "d", nil, nil)
			log.waitFor(t, 5*time.Second, "add d")

			got := obs.requests(before)
			wantWatch := "watch rv=" + lastRV
			wantRelist := fmt.Sprintf(tc.relist, lastRV)
			i := slices.Index(got, wantWatch)
			if i < 0 || !slices.Contains(got[i+1:], wantRelist) {
				t.Errorf("requests after the cut %q, want %q (answered 410) then %q", got, wantWatch, wantRelist)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
