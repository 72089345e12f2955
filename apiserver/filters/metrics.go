package filters

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// latencyBuckets are kube-apiserver's buckets for
// apiserver_request_duration_seconds and etcd_request_duration_seconds.
var latencyBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
	4, 5, 6, 8, 10, 15, 20, 30, 45, 60}

// Label names of the request metrics, as kube-apiserver names them.
var (
	requestLabelNames     = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}
	durationLabelNames    = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}
	longRunningLabelNames = []string{"verb", "group", "version", "resource", "subresource", "scope", "component"}
	terminationLabelNames = []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"}
	abortLabelNames       = []string{"verb", "group", "version", "resource", "subresource", "scope"}
)

// Metrics are the server's metrics, in a registry of their own. Create
// them with NewMetrics; the zero value is not usable.
type Metrics struct {
	registry *prometheus.Registry
	now      func() time.Time // a test's clock for the in-flight watermarks

	requests     *prometheus.CounterVec
	durations    *prometheus.HistogramVec
	longRunning  *prometheus.GaugeVec
	terminations *prometheus.CounterVec
	aborts       *prometheus.CounterVec
	readOnly     *watermark
	mutating     *watermark

	watchEvents     *prometheus.CounterVec
	watchEventSizes *prometheus.HistogramVec
	storageObjects  *prometheus.GaugeVec
	resourceObjects *prometheus.GaugeVec
	etcdDurations   *prometheus.HistogramVec
	etcdRequests    *prometheus.CounterVec
	etcdErrors      *prometheus.CounterVec
	watchCacheBytes *prometheus.GaugeVec
}

var defaultMetrics = NewMetrics()

// Default returns the metrics the server serves and the package-level
// functions record into.
func Default() *Metrics { return defaultMetrics }

// NewMetrics returns empty metrics in a new registry, with the Go runtime
// and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{registry: prometheus.NewRegistry(), now: time.Now}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
	}, requestLabelNames)
	m.durations = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
		Buckets: latencyBuckets,
	}, durationLabelNames)
	m.longRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_longrunning_requests",
		Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
	}, longRunningLabelNames)
	m.terminations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_terminations_total",
		Help: "Number of requests which apiserver terminated in self-defense.",
	}, terminationLabelNames)
	m.aborts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_aborts_total",
		Help: "Number of requests which apiserver aborted possibly due to a timeout, for each group, version, verb, resource, subresource and scope",
	}, abortLabelNames)
	m.readOnly, m.mutating = &watermark{now: m.clock}, &watermark{now: m.clock}
	m.registry.MustRegister(m.requests, m.durations, m.longRunning, m.terminations, m.aborts,
		inflightGauge("readOnly", m.readOnly), inflightGauge("mutating", m.mutating))
	m.registerStorage()
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) clock() time.Time { return m.now() }

// Handler serves the metrics in the Prometheus exposition formats (text
// unless the scraper asks for another).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Registry is where the metrics are registered; a caller may add its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// observeRequest records a served request.
func (m *Metrics) observeRequest(l labels, code int, elapsed time.Duration) {
	m.requests.WithLabelValues(l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, l.component, strconv.Itoa(code)).Inc()
	m.durations.WithLabelValues(l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, l.component).Observe(elapsed.Seconds())
}

// longRunningGauge is the apiserver_longrunning_requests gauge of a
// request. kube-apiserver names the path of a non-resource request in
// subresource here; the labels never do, so that clients cannot grow the
// label set.
func (m *Metrics) longRunningGauge(l labels) prometheus.Gauge {
	return m.longRunning.WithLabelValues(l.verb, l.group, l.version, l.resource, l.subresource, l.scope, l.component)
}

// terminated records a request refused in self-defense (429).
func (m *Metrics) terminated(l labels, code int) {
	m.terminations.WithLabelValues(l.verb, l.group, l.version, l.resource, l.subresource, l.scope, l.component, strconv.Itoa(code)).Inc()
}

// aborted records a request whose handler panicked with
// http.ErrAbortHandler.
func (m *Metrics) aborted(l labels) {
	m.aborts.WithLabelValues(l.verb, l.group, l.version, l.resource, l.subresource, l.scope).Inc()
}
