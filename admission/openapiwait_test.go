package admission

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestOpenAPIAfter checks that the plugins' /openapi/v3 requests wait for
// the documents to be warm, and only those, and end when the server stops.
func TestOpenAPIAfter(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openapi/v3" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=X"}}}`))
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if openAPIAfter(client, nil, nil) != kubernetes.Interface(client) {
		t.Fatal("openAPIAfter with no warm channel wrapped the client")
	}

	for _, release := range []string{"warm", "stop"} {
		t.Run(release, func(t *testing.T) {
			asked.Store(0)
			warm, stop := make(chan struct{}), make(chan struct{})
			paths := make(chan []string, 1)
			go func() {
				got, err := openAPIAfter(client, warm, stop).Discovery().OpenAPIV3().Paths()
				if release == "warm" && err != nil {
					t.Errorf("Paths: %v", err)
				}
				if release == "stop" && !errors.Is(err, context.Canceled) {
					t.Errorf("Paths once the server stopped: %v, want context.Canceled", err)
				}
				var names []string
				for p := range got {
					names = append(names, p)
				}
				paths <- names
			}()
			select {
			case p := <-paths:
				t.Fatalf("Paths answered %v before the documents were warm", p)
			case <-time.After(100 * time.Millisecond):
			}
			if n := asked.Load(); n != 0 {
				t.Fatalf("/openapi/v3 asked %d times before the documents were warm", n)
			}
			if release == "warm" {
				close(warm)
			} else {
				close(stop)
			}
			select {
			case p := <-paths:
				want, wantAsked := []string{"api/v1"}, int32(1)
				if release == "stop" {
					// A stopped server's documents are not asked for.
					want, wantAsked = nil, 0
				}
				if !slices.Equal(p, want) || asked.Load() != wantAsked {
					t.Fatalf("after %s: paths %v, /openapi/v3 asked %d times; want %v, %d times", release, p, asked.Load(), want, wantAsked)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Paths still waiting after %s closed", release)
			}
		})
	}

	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := openAPIAfter(client, make(chan struct{}), nil).Discovery().OpenAPIV3WithContext(ctx).PathsWithContext(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("PathsWithContext with a cancelled context = %v, want context.Canceled", err)
		}
	})

	t.Run("other requests", func(t *testing.T) {
		// Discovery other than /openapi/v3 is not held back (the server
		// answers 404 here, at once).
		done := make(chan error, 1)
		go func() {
			_, err := openAPIAfter(client, make(chan struct{}), nil).Discovery().ServerVersion()
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("ServerVersion from a server without /version succeeded")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("ServerVersion waited for the documents")
		}
	})
}
