package e2e

import (
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// TestMetrics scrapes /metrics after "kubectl get ns": the list is
// counted in apiserver_request_total with kube-apiserver's labels, and
// only authenticated users may read the metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	plainKubectl(t, dataDir).ok(t, "get", "ns")

	cfg := srv.restConfig(t)
	if code, _ := scrapeGet(t, rest.AnonymousClientConfig(cfg), "/metrics"); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	code, body := scrapeGet(t, cfg, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	want := map[string]string{"verb": "LIST", "dry_run": "", "group": "", "version": "v1", "resource": "namespaces",
		"subresource": "", "scope": "cluster", "component": "apiserver", "code": "200"}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if maps.Equal(labels, want) {
			if v := m.GetCounter().GetValue(); v < 1 {
				t.Errorf("apiserver_request_total%v = %v, want at least 1", want, v)
			}
			return
		}
	}
	t.Errorf("no apiserver_request_total series %v in:\n%s", want, body)
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
