package apiserver

// client-go over protobuf: the typed clients, watches and informers that
// controllers run with ContentType application/vnd.kubernetes.protobuf
// get the objects the JSON path gives.

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// contentTypes records the Accept header of each request and the
// Content-Type of each answer.
type contentTypes struct {
	mu      sync.Mutex
	accepts []string
	answers []string
}

func (c *contentTypes) RoundTrip(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err == nil {
			c.mu.Lock()
			c.accepts = append(c.accepts, r.Header.Get("Accept"))
			c.answers = append(c.answers, resp.Header.Get("Content-Type"))
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// protobufClient is a clientset speaking protobuf, as controllers
// configure theirs, recording the media types of its requests.
func protobufClient(t testing.TB, ts *testServer) (kubernetes.Interface, *contentTypes) {
	return clientFor(ts, runtime.ContentTypeProtobuf)
}

// jsonClient is a clientset speaking JSON only. (client-go v0.37's typed
// clients ask for protobuf, JSON as the fallback, when their config names
// no content type, so ts.client speaks protobuf too.)
func jsonClient(t testing.TB, ts *testServer) (kubernetes.Interface, *contentTypes) {
	return clientFor(ts, runtime.ContentTypeJSON)
}

func clientFor(ts *testServer, contentType string) (kubernetes.Interface, *contentTypes) {
	seen := &contentTypes{}
	cfg := rest.CopyConfig(ts.config)
	cfg.ContentType = contentType
	if contentType == runtime.ContentTypeProtobuf {
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	cfg.WrapTransport = seen.RoundTrip
	return kubernetes.NewForConfigOrDie(cfg), seen
}

// checkAll fails unless every answer was in contentType (or its watch
// stream).
func (c *contentTypes) checkAll(t testing.TB, contentType string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ct := range c.answers {
		if ct != contentType && ct != contentType+";stream=watch" {
			t.Errorf("request %d (Accept %q) was answered in %q, want %s", i, c.accepts[i], ct, contentType)
		}
	}
	if len(c.answers) == 0 {
		t.Errorf("no requests recorded")
	}
}

// sameAsJSON fails unless got equals what the JSON client reads.
func sameAsJSON(t testing.TB, what string, got, json runtime.Object) {
	t.Helper()
	if diff := cmp.Diff(json, got); diff != "" {
		t.Errorf("%s over protobuf differs from JSON (-json +protobuf):\n%s", what, diff)
	}
}

// TestProtobufClientCRUD: every verb of a typed client over protobuf, the
// answers compared with a JSON client's reads; errors keep their status.
func TestProtobufClientCRUD(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pc, seen := protobufClient(t, ts)
	jc, jseen := jsonClient(t, ts)
	cms, jcms := pc.CoreV1().ConfigMaps("default"), jc.CoreV1().ConfigMaps("default")

	created, err := cms.Create(ctx, newConfigMap("a", map[string]string{"k": "v"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) *corev1.ConfigMap {
		t.Helper()
		got, err := jcms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	sameAsJSON(t, "create", created, read("a"))
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameAsJSON(t, "get", got, read("a"))
	got.Data["k2"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameAsJSON(t, "update", updated, read("a"))
	patched, err := cms.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"data":{"k3":"v3"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameAsJSON(t, "patch", patched, read("a"))
	if _, err := cms.Create(ctx, newConfigMap("b", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jlist, err := jcms.List(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		t.Fatal(err)
	}
	sameAsJSON(t, "list", list, jlist)
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Continue == "" || page.RemainingItemCount == nil || *page.RemainingItemCount != 1 {
		t.Errorf("a page of 1: %+v, %v", page.ListMeta, err)
	}

	_, err = cms.Get(ctx, "nope", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "nope" not found` {
		t.Errorf("get of a missing configmap: %v, want 404", err)
	}
	_, err = cms.Create(ctx, newConfigMap("a", nil), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) || err.Error() != `configmaps "a" already exists` {
		t.Errorf("second create: %v, want 409", err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	seen.checkAll(t, runtime.ContentTypeProtobuf)
	jseen.checkAll(t, runtime.ContentTypeJSON)
}

// TestProtobufClientWatch: a typed watch over protobuf sees the events a
// JSON watch sees, with the same objects.
func TestProtobufClientWatch(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pc, seen := protobufClient(t, ts)
	jc, jseen := jsonClient(t, ts)
	jcms := jc.CoreV1().ConfigMaps("default")
	start, err := jcms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := metav1.ListOptions{ResourceVersion: start.ResourceVersion}
	pw, err := pc.CoreV1().ConfigMaps("default").Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	jw, err := jcms.Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer jw.Stop()
	cm := mustCreateConfigMap(t, jcms, "w", map[string]string{"n": "1"}, nil)
	cm.Data["n"] = "2"
	if _, err := jcms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := jcms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		p, j := nextEvent(t, pw, 5*time.Second), nextEvent(t, jw, 5*time.Second)
		if p.Type != typ || j.Type != typ {
			t.Fatalf("events %s (protobuf) and %s (JSON), want %s", p.Type, j.Type, typ)
		}
		sameAsJSON(t, string(typ)+" event", p.Object, j.Object)
	}
	seen.checkAll(t, runtime.ContentTypeProtobuf)
	jseen.checkAll(t, runtime.ContentTypeJSON)
}

// TestProtobufInformer: a shared informer over protobuf, in both of the
// reflector's start modes, holds the objects a JSON client reads and sees
// the changes.
func TestProtobufInformer(t *testing.T) {
	for _, watchList := range []bool{true, false} {
		name := map[bool]string{true: "watchlist", false: "list"}[watchList]
		t.Run(name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			ts := newTestServer(t)
			ctx := context.Background()
			jc, jseen := jsonClient(t, ts)
			jcms := jc.CoreV1().ConfigMaps("default")
			mustCreateConfigMap(t, jcms, "pre", map[string]string{"n": "0"}, nil)
			pc, seen := protobufClient(t, ts)
			log := &handlerLog{}
			inf := startInformer(t, pc, log)
			log.waitFor(t, 5*time.Second, "add pre")
			cm := mustCreateConfigMap(t, jcms, "later", map[string]string{"n": "1"}, nil)
			cm.Data["n"] = "2"
			if _, err := jcms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			log.waitFor(t, 5*time.Second, "add later", "update later n=2")
			keys := inf.GetStore().ListKeys()
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"default/later", "default/pre"}) {
				t.Fatalf("informer holds %q", keys)
			}
			for _, name := range []string{"pre", "later"} {
				cached, _, _ := inf.GetStore().GetByKey("default/" + name)
				want, err := jcms.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				sameAsJSON(t, "informer's "+name, cached.(*corev1.ConfigMap), want)
			}
			seen.checkAll(t, runtime.ContentTypeProtobuf)
			jseen.checkAll(t, runtime.ContentTypeJSON)
		})
	}
}

// TestProtobufMetadataClient: client-go's metadata client (what the
// garbage collector and namespace controller use) gets PartialObjectMetadata
// in protobuf, lists and watches, for built-in and custom kinds alike.
func TestProtobufMetadataClient(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	createWidgetsCRD(t, ts)
	seen := &contentTypes{}
	cfg := rest.CopyConfig(ts.config)
	cfg.WrapTransport = seen.RoundTrip
	mc := metadata.NewForConfigOrDie(cfg)
	for _, tc := range []struct {
		name   string
		gvr    schema.GroupVersionResource
		create func(name string) error
	}{
		{"configmaps", gvrConfigMaps, func(name string) error {
			_, err := ts.client.CoreV1().ConfigMaps("default").Create(ctx, newConfigMap(name, nil), metav1.CreateOptions{})
			return err
		}},
		{"widgets", gvrWidgets, func(name string) error {
			_, err := widgets(ts).Create(ctx, widget(name, map[string]any{"size": int64(1)}), metav1.CreateOptions{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.create("first"); err != nil {
				t.Fatal(err)
			}
			res := mc.Resource(tc.gvr).Namespace("default")
			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name != "first" {
				t.Fatalf("list: %+v, %v", list, err)
			}
			w, err := res.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if err := tc.create("second"); err != nil {
				t.Fatal(err)
			}
			ev := nextEvent(t, w, 5*time.Second)
			p, ok := ev.Object.(*metav1.PartialObjectMetadata)
			if ev.Type != watch.Added || !ok || p.Name != "second" {
				t.Errorf("event %s %#v, want ADDED second", ev.Type, ev.Object)
			}
		})
	}
	seen.checkAll(t, runtime.ContentTypeProtobuf)
}
