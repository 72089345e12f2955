package e2e

import (
	"context"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestMetrics scrapes /metrics after "kubectl get ns" and a watch of
// namespaces: the list is counted in apiserver_request_total with
// kube-apiserver's labels, the other families the issue names are there
// with the namespaces' series, and anonymous users may not read the
// metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	plainKubectl(t, dataDir).ok(t, "get", "ns")

	cfg := srv.restConfig(t)
	watchNamespacesOnce(t, cfg)
	if code, _ := scrapeGet(t, rest.AnonymousClientConfig(cfg), "/metrics"); code != http.StatusForbidden {
		t.Errorf("/metrics without a token (system:anonymous): %d, want 403", code)
	}
	code, body := scrapeGet(t, cfg, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d: %s", code, body)
	}
	families := parseMetrics(t, body)
	checkFamilies(t, families)
	want := map[string]string{"verb": "LIST", "dry_run": "", "group": "", "version": "v1", "resource": "namespaces",
		"subresource": "", "scope": "cluster", "component": "apiserver", "code": "200"}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		if maps.Equal(labelsOf(m), want) {
			if v := m.GetCounter().GetValue(); v < 1 {
				t.Errorf("apiserver_request_total%v = %v, want at least 1", want, v)
			}
			return
		}
	}
	t.Errorf("no apiserver_request_total series %v in:\n%s", want, body)
}

// parseMetrics parses a /metrics body in the Prometheus text format.
func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return families
}

// labelsOf is a series' labels as a map.
func labelsOf(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

// scrapeGet sends a GET with the client configuration and returns the status
// and body.
func scrapeGet(t *testing.T, cfg *rest.Config, path string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(cfg.Host + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// watchNamespacesOnce watches namespaces from resourceVersion 0, whose
// first events are the existing namespaces, and reads one.
func watchNamespacesOnce(t *testing.T, cfg *rest.Config) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := cs.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added {
			t.Fatalf("first watch event %s, want ADDED", ev.Type)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
}

// checkFamilies: each family the issue names is there, with a series of
// namespaces (or of an etcd operation on them) that has counted something.
func checkFamilies(t *testing.T, families map[string]*dto.MetricFamily) {
	t.Helper()
	checks := []struct {
		family string
		labels map[string]string
	}{
		{"apiserver_request_duration_seconds", map[string]string{"verb": "LIST", "resource": "namespaces"}},
		{"apiserver_storage_objects", map[string]string{"resource": "namespaces"}},
		{"apiserver_watch_events_total", map[string]string{"resource": "namespaces"}},
		{"etcd_request_duration_seconds", map[string]string{"resource": "namespaces"}},
	}
	for _, c := range checks {
		found := false
		for _, m := range families[c.family].GetMetric() {
			labels := labelsOf(m)
			match := true
			for k, v := range c.labels {
				match = match && labels[k] == v
			}
			value := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			if match && value > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s series with %v and a value above 0", c.family, c.labels)
		}
	}
}
