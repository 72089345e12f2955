package filters

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// registerStorage creates and registers the metrics other layers report:
// watch events, stored objects and etcd requests.
func (m *Metrics) registerStorage() {
	m.watchEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_events_total",
		Help: "Number of events sent in watch clients",
	}, []string{"group", "version", "resource"})
	m.watchEventSizes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_events_sizes",
		Help:    "Watch event size distribution in bytes",
		Buckets: prometheus.ExponentialBuckets(1024, 2.0, 8), // 1K, 2K, 4K, 8K, ..., 128K.
	}, []string{"group", "version", "resource"})
	m.storageObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_storage_objects",
		Help: "[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
	}, []string{"resource"})
	m.resourceObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_resource_objects",
		Help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
	}, []string{"group", "resource"})
	m.etcdDurations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "etcd_request_duration_seconds",
		Help:    "Etcd request latency in seconds for each operation and object type.",
		Buckets: latencyBuckets,
	}, []string{"operation", "group", "resource"})
	m.etcdRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_requests_total",
		Help: "Etcd request counts for each operation and object type.",
	}, []string{"operation", "group", "resource"})
	m.etcdErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_request_errors_total",
		Help: "Etcd failed request counts for each operation and object type.",
	}, []string{"operation", "group", "resource"})
	// kube-apiserver bounds its watch cache by events only and has no
	// metric of its size: strata's name.
	m.watchCacheBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "strata_watch_cache_bytes",
		Help: "Stored size (keys and JSON) of the events in the watch cache's history, split by resource; bounded by --watch-cache-size-bytes.",
	}, []string{"group", "resource"})
	m.registry.MustRegister(m.watchEvents, m.watchEventSizes, m.storageObjects, m.resourceObjects,
		m.etcdDurations, m.etcdRequests, m.etcdErrors, m.watchCacheBytes)
}

// WatchEventSent counts one event sent to a watch client of gvr
// (apiserver_watch_events_total) and, when size >= 0, its encoded size in
// bytes (apiserver_watch_events_sizes). Bookmarks count as events, as in
// kube-apiserver.
func (m *Metrics) WatchEventSent(gvr schema.GroupVersionResource, size int) {
	m.watchEvents.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource).Inc()
	if size >= 0 {
		m.watchEventSizes.WithLabelValues(gvr.Group, gvr.Version, gvr.Resource).Observe(float64(size))
	}
}

// SetStorageObjects sets the number of stored objects of gr: the resource
// label of apiserver_storage_objects is gr.String() ("pods",
// "deployments.apps"); apiserver_resource_objects has group and resource.
// n is -1 when counting failed.
func (m *Metrics) SetStorageObjects(gr schema.GroupResource, n int64) {
	m.storageObjects.WithLabelValues(gr.String()).Set(float64(n))
	m.resourceObjects.WithLabelValues(gr.Group, gr.Resource).Set(float64(n))
}

// SetWatchCacheBytes sets the size of gr's watch cache history
// (strata_watch_cache_bytes).
func (m *Metrics) SetWatchCacheBytes(gr schema.GroupResource, n int64) {
	m.watchCacheBytes.WithLabelValues(gr.Group, gr.Resource).Set(float64(n))
}

// ObserveEtcd records one etcd request for gr that took d: operation is
// kube-apiserver's name for it ("get", "list", "listWithCount", "create",
// "update", "delete", ...). A non-nil err also counts as an error.
func (m *Metrics) ObserveEtcd(operation string, gr schema.GroupResource, d time.Duration, err error) {
	m.etcdDurations.WithLabelValues(operation, gr.Group, gr.Resource).Observe(d.Seconds())
	m.etcdRequests.WithLabelValues(operation, gr.Group, gr.Resource).Inc()
	if err != nil {
		m.etcdErrors.WithLabelValues(operation, gr.Group, gr.Resource).Inc()
	}
}
