package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkServeGet serves GETs of one ConfigMap through the whole filter
// chain and the API handler in-process (no TLS, no HTTP/2), as the
// bench's get cells ask for it: client-go's protobuf, the admin's token.
// It measures what strata adds per request above the transport that the
// floor shares.
func BenchmarkServeGet(b *testing.B) {
	r, cfg := startServeBench(b)
	for _, c := range []struct{ name, query string }{{"rv0", "?resourceVersion=0"}, {"consistent", ""}} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/get"+c.query, nil)
			req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
			req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, */*")
			req.Header.Set("User-Agent", "strata-bench/v0.0.0 (linux/amd64) kubernetes/$Format")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				r.handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkServePatch serves strategic merge patches of the ConfigMap as
// BenchmarkServeGet serves its GETs: each changes one key, so each is a
// write to etcd (the embedded member) and an event for the watch cache
// and the controllers' informers.
func BenchmarkServePatch(b *testing.B) {
	r, cfg := startServeBench(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := fmt.Sprintf(`{"data":{"i":"%d"}}`, i)
		req := httptest.NewRequest(http.MethodPatch, "/api/v1/namespaces/default/configmaps/get", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, */*")
		req.Header.Set("User-Agent", "strata-bench/v0.0.0 (linux/amd64) kubernetes/$Format")
		w := httptest.NewRecorder()
		r.handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// startServeBench starts a server with the ConfigMap "get" (512 bytes of
// data) in the default namespace.
func startServeBench(b *testing.B) (*Running, *rest.Config) {
	o := NewOptions()
	o.DataDir, o.SecurePort = filepath.Join(b.TempDir(), "data"), 0
	o.Logger = slog.New(slog.DiscardHandler)
	r, cfg := start(b, o)
	cs := kubernetes.NewForConfigOrDie(cfg)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "get"}, Data: map[string]string{"payload": strings.Repeat("x", 512)}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return r, cfg
}
