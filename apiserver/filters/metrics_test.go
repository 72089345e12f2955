package filters

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// series are the labels of an apiserver_request_total series.
type series struct {
	verb, dryRun, group, version, resource, subresource, scope, component, code string
}

// key is the seriesKey of s; without the code it is the key of its
// apiserver_request_duration_seconds series.
func (s series) key(withCode bool) string {
	kv := []string{"verb", s.verb, "dry_run", s.dryRun, "group", s.group, "version", s.version,
		"resource", s.resource, "subresource", s.subresource, "scope", s.scope, "component", s.component}
	if withCode {
		kv = append(kv, "code", s.code)
	}
	return key(kv...)
}

// TestRequestMetrics sends known requests through the chain, scrapes
// /metrics over HTTP and checks every apiserver_request_total series.
func TestRequestMetrics(t *testing.T) {
	s := newTestServer(t, Config{KnownResource: func(gvr schema.GroupVersionResource, sub string) bool {
		return gvr.Resource != "madeups" && (sub == "" || sub == "status" || sub == "exec")
	}})
	counts, durations := map[string]float64{}, map[string]float64{}
	for _, tt := range []struct {
		method, path, token string
		header              []string
		want                series // the series it counts in
	}{
		{"GET", "/api/v1/namespaces", "alice", nil,
			series{"LIST", "", "", "v1", "namespaces", "", "cluster", "apiserver", "200"}},
		{"GET", "/api/v1/namespaces?limit=500", "alice", nil,
			series{"LIST", "", "", "v1", "namespaces", "", "cluster", "apiserver", "200"}},
		{"GET", "/api/v1/namespaces/default", "alice", nil,
			series{"GET", "", "", "v1", "namespaces", "", "resource", "apiserver", "200"}},
		{"HEAD", "/api/v1/namespaces/default/pods/p?code=404", "alice", nil,
			series{"GET", "", "", "v1", "pods", "", "resource", "apiserver", "404"}},
		{"GET", "/api/v1/namespaces/default/pods", "alice", nil,
			series{"LIST", "", "", "v1", "pods", "", "namespace", "apiserver", "200"}},
		{"GET", "/api/v1/pods?watch=true", "alice", nil,
			series{"WATCH", "", "", "v1", "pods", "", "cluster", "apiserver", "200"}},
		{"GET", "/api/v1/watch/namespaces/default/pods", "alice", nil,
			series{"WATCH", "", "", "v1", "pods", "", "namespace", "apiserver", "200"}},
		{"POST", "/apis/apps/v1/namespaces/default/deployments?code=201", "alice", nil,
			series{"POST", "", "apps", "v1", "deployments", "", "resource", "apiserver", "201"}},
		{"POST", "/apis/apps/v1/namespaces/default/deployments?dryRun=All&code=201", "alice", nil,
			series{"POST", "All", "apps", "v1", "deployments", "", "resource", "apiserver", "201"}},
		{"POST", "/apis/apps/v1/namespaces/default/deployments?dryRun=Some&code=400", "alice", nil,
			series{"POST", "invalid", "apps", "v1", "deployments", "", "resource", "apiserver", "400"}},
		{"PUT", "/apis/apps/v1/namespaces/default/deployments/d/status", "alice", nil,
			series{"PUT", "", "apps", "v1", "deployments", "status", "resource", "apiserver", "200"}},
		{"PATCH", "/apis/apps/v1/namespaces/default/deployments/d", "alice", []string{"Content-Type", "application/merge-patch+json"},
			series{"PATCH", "", "apps", "v1", "deployments", "", "resource", "apiserver", "200"}},
		{"PATCH", "/apis/apps/v1/namespaces/default/deployments/d?code=415", "alice", []string{"Content-Type", "application/apply-patch+yaml"},
			series{"APPLY", "", "apps", "v1", "deployments", "", "resource", "apiserver", "415"}},
		{"DELETE", "/api/v1/namespaces/default/pods/p", "alice", nil,
			series{"DELETE", "", "", "v1", "pods", "", "resource", "apiserver", "200"}},
		// A delete of a collection is DELETE for kube-apiserver's metrics
		// too: the verb comes from the HTTP method.
		{"DELETE", "/api/v1/namespaces/default/pods", "alice", nil,
			series{"DELETE", "", "", "v1", "pods", "", "namespace", "apiserver", "200"}},
		{"GET", "/api/v1/namespaces/default/pods/p/exec?code=404", "alice", nil,
			series{"CONNECT", "", "", "v1", "pods", "exec", "resource", "apiserver", "404"}},
		{"OPTIONS", "/api/v1/namespaces?code=405", "alice", nil,
			series{"other", "", "", "v1", "namespaces", "", "cluster", "apiserver", "405"}},
		// Unknown resources are counted without their names.
		{"GET", "/api/v1/madeups?code=404", "alice", nil,
			series{"LIST", "", "", "", "", "", "cluster", "apiserver", "404"}},
		{"GET", "/api/v1/namespaces", "", nil,
			series{"LIST", "", "", "v1", "namespaces", "", "cluster", "apiserver", "401"}},
		{"GET", "/api/v1/namespaces", "wrong", nil,
			series{"LIST", "", "", "v1", "namespaces", "", "cluster", "apiserver", "401"}},
		{"GET", "/healthz", "", nil,
			series{"GET", "", "", "", "", "/healthz", "", "", "200"}},
		{"GET", "/apis", "alice", nil,
			series{"GET", "", "", "", "", "", "", "apiserver", "200"}},
		{"GET", "/no/such/path?code=404", "", nil,
			series{"GET", "", "", "", "", "", "", "apiserver", "401"}},
	} {
		resp, _ := s.do(t, tt.method, tt.path, tt.token, tt.header...)
		if got := strconv.Itoa(resp.StatusCode); got != tt.want.code {
			t.Fatalf("%s %s: %s, want %s", tt.method, tt.path, resp.Status, tt.want.code)
		}
		counts[tt.want.key(true)]++
		durations[tt.want.key(false)]++
	}
	families := s.scrape(t)

	if diff := cmp.Diff(counts, values(families, "apiserver_request_total")); diff != "" {
		t.Errorf("apiserver_request_total (-want +got):\n%s", diff)
	}

	// The histogram has kube-apiserver's buckets and one sample per
	// request, watches included (recorded when they end).
	if diff := cmp.Diff(durations, values(families, "apiserver_request_duration_seconds")); diff != "" {
		t.Errorf("apiserver_request_duration_seconds sample counts (-want +got):\n%s", diff)
	}
	var bounds []float64
	for _, b := range families["apiserver_request_duration_seconds"].GetMetric()[0].GetHistogram().GetBucket() {
		if !math.IsInf(b.GetUpperBound(), 1) { // the parser adds +Inf
			bounds = append(bounds, b.GetUpperBound())
		}
	}
	if !slices.Equal(bounds, latencyBuckets) {
		t.Errorf("buckets %v, want %v", bounds, latencyBuckets)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := families[name]; !ok {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}
}

// TestStorageMetrics checks the functions other layers call.
func TestStorageMetrics(t *testing.T) {
	s := newTestServer(t, Config{})
	m := s.metrics
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	m.WatchEventSent(pods, 2000)
	m.WatchEventSent(pods, -1)
	m.WatchEventSent(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, 100)
	m.SetStorageObjects(schema.GroupResource{Resource: "pods"}, 3)
	m.SetStorageObjects(schema.GroupResource{Group: "apps", Resource: "deployments"}, 7)
	m.SetStorageObjects(schema.GroupResource{Group: "apps", Resource: "deployments"}, 5)
	m.ObserveEtcd("get", schema.GroupResource{Resource: "pods"}, 3*time.Millisecond, nil)
	m.ObserveEtcd("get", schema.GroupResource{Resource: "pods"}, 30*time.Millisecond, errors.New("etcd: timeout"))
	m.ObserveEtcd("listWithCount", schema.GroupResource{Group: "apps", Resource: "deployments"}, time.Second, nil)
	m.SetWatchCacheBytes(schema.GroupResource{Resource: "secrets"}, 5<<20)
	m.SetWatchCacheBytes(schema.GroupResource{Resource: "secrets"}, 3<<20)
	families := s.scrape(t)

	for _, tt := range []struct {
		name string
		want map[string]float64
	}{
		{"apiserver_watch_events_total", map[string]float64{
			key("group", "", "version", "v1", "resource", "pods"):            2,
			key("group", "apps", "version", "v1", "resource", "deployments"): 1,
		}},
		{"apiserver_watch_events_sizes", map[string]float64{
			key("group", "", "version", "v1", "resource", "pods"):            1,
			key("group", "apps", "version", "v1", "resource", "deployments"): 1,
		}},
		{"apiserver_storage_objects", map[string]float64{
			key("resource", "pods"):             3,
			key("resource", "deployments.apps"): 5,
		}},
		{"apiserver_resource_objects", map[string]float64{
			key("group", "", "resource", "pods"):            3,
			key("group", "apps", "resource", "deployments"): 5,
		}},
		{"etcd_request_duration_seconds", map[string]float64{
			key("operation", "get", "group", "", "resource", "pods"):                      2,
			key("operation", "listWithCount", "group", "apps", "resource", "deployments"): 1,
		}},
		{"etcd_requests_total", map[string]float64{
			key("operation", "get", "group", "", "resource", "pods"):                      2,
			key("operation", "listWithCount", "group", "apps", "resource", "deployments"): 1,
		}},
		{"etcd_request_errors_total", map[string]float64{
			key("operation", "get", "group", "", "resource", "pods"): 1,
		}},
		{"strata_watch_cache_bytes", map[string]float64{
			key("group", "", "resource", "secrets"): 3 << 20,
		}},
	} {
		if diff := cmp.Diff(tt.want, values(families, tt.name)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestDefaultMetrics: what is recorded into Default() is in its registry.
func TestDefaultMetrics(t *testing.T) {
	gr := schema.GroupResource{Group: "test.strata.dev", Resource: "defaultmetrics"}
	Default().SetStorageObjects(gr, 42)
	families, err := Default().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "apiserver_storage_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			if seriesKey(m.GetLabel()) == key("resource", gr.String()) && m.GetGauge().GetValue() == 42 {
				return
			}
		}
	}
	t.Errorf("SetStorageObjects did not reach Default()")
}
