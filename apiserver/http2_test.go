package apiserver

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// streams is an HTTP/2 server whose every request is a stream of lines:
// each broadcast writes one line to every open stream and flushes it.
type streams struct {
	mu      sync.Mutex
	outs    []chan struct{}
	flushed chan struct{} // a line was written and flushed
	srv     *httptest.Server
}

func newStreams(t testing.TB, configured bool) *streams {
	s := &streams{flushed: make(chan struct{}, 1)}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch := make(chan struct{}, 1)
		s.mu.Lock()
		s.outs = append(s.outs, ch)
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-ch:
				io.WriteString(w, "event\n")
				w.(http.Flusher).Flush()
				s.flushed <- struct{}{}
			case <-r.Context().Done():
				return
			}
		}
	}))
	s.srv.EnableHTTP2 = true
	if configured {
		if err := ConfigureHTTP2(s.srv.Config); err != nil {
			t.Fatal(err)
		}
	}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

// open starts n streams on one connection and returns, for each, a
// channel that receives a value for each line read.
func (s *streams) open(t testing.TB, n int) []chan struct{} {
	client := s.srv.Client()
	reads := make([]chan struct{}, n)
	for i := range reads {
		resp, err := client.Get(s.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("stream %d: %s, want HTTP/2", i, resp.Proto)
		}
		t.Cleanup(func() { resp.Body.Close() })
		reads[i] = make(chan struct{}, 16)
		go func(read chan struct{}) {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				read <- struct{}{}
			}
			close(read)
		}(reads[i])
	}
	return reads
}

// broadcast writes one line to every stream, one stream after the other
// (as a watch cache hands an event to its watchers, each sending it on
// its own), and waits until each has read it.
func (s *streams) broadcast(t testing.TB, reads []chan struct{}) {
	s.mu.Lock()
	for _, ch := range s.outs {
		ch <- struct{}{}
		<-s.flushed
	}
	s.mu.Unlock()
	for i, read := range reads {
		if _, ok := <-read; !ok {
			t.Fatalf("stream %d ended", i)
		}
	}
}

// TestConfigureHTTP2 serves 300 streams in HTTP/2 (more than the 250 one
// connection carries: the client opens another), every stream getting
// each of 20 lines.
func TestConfigureHTTP2(t *testing.T) {
	s := newStreams(t, true)
	reads := s.open(t, 300)
	for range 20 {
		s.broadcast(t, reads)
	}
}

// BenchmarkHTTP2Fanout is one line delivered to 250 streams of one
// connection, each flushed on its own, as a watch event reaches an
// informer's watches: with net/http's HTTP/2 server (its round robin
// scheduler) and with ConfigureHTTP2's.
func BenchmarkHTTP2Fanout(b *testing.B) {
	for _, c := range []struct {
		name       string
		configured bool
	}{{"net-http", false}, {"configured", true}} {
		b.Run(c.name, func(b *testing.B) {
			s := newStreams(b, c.configured)
			reads := s.open(b, 250)
			for b.Loop() {
				s.broadcast(b, reads)
			}
		})
	}
}
