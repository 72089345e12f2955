package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// shutdownBudget is how long strata may take from SIGTERM to its exit
// when watches are open and writes are in flight.
const shutdownBudget = 10 * time.Second

// TestShutdownDuringWatchesAndWrites sends SIGTERM to a server while
// client-go watches are open and writers are creating and updating
// ConfigMaps, over HTTP/2 and HTTP/1.1:
//
//   - the server exits with status 0 within shutdownBudget;
//   - every watch ends cleanly: its response body ends at an event
//     boundary with io.EOF (not cut in the middle of an event, not reset)
//     and its ResultChan closes without an ERROR event;
//   - every write is answered 2xx until the server stops answering, then
//     fails to connect: no 5xx or other error status, no response cut
//     short;
//   - after a restart on the same data directory every acknowledged write
//     is there, with the acknowledged value and resourceVersion or a later
//     one (a write in flight at the stop may have landed unacknowledged).
func TestShutdownDuringWatchesAndWrites(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	rec := &httpRecorder{}
	protocols := []string{"h2", "http/1.1"}
	clients := map[string]kubernetes.Interface{}      // writers: timeout per request
	watchClients := map[string]kubernetes.Interface{} // watches: no timeout
	for _, proto := range protocols {
		for _, timeout := range []time.Duration{15 * time.Second, 0} {
			cfg := srv.restConfig(t)
			cfg.QPS = -1 // no client-side rate limit
			cfg.Timeout = timeout
			cfg.TLSClientConfig.NextProtos = []string{proto} // "http/1.1" alone turns client-go's HTTP/2 off
			cfg.Wrap(rec.wrap)
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if timeout == 0 {
				watchClients[proto] = cs
			} else {
				clients[proto] = cs
			}
		}
	}
	const ns = "shutdown"
	ctx := t.Context()
	if _, err := clients["h2"].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Watches: of the namespace and of all namespaces, over each protocol.
	type watchEnd struct {
		name   string
		events int
		errs   []string // ERROR events
		closed bool
	}
	var (
		watchesWG sync.WaitGroup
		ends      = make(chan watchEnd, 8)
		watching  int
	)
	for _, proto := range protocols {
		for _, wns := range []string{ns, metav1.NamespaceAll} {
			name := fmt.Sprintf("watch %s namespace %q", proto, wns)
			w, err := watchClients[proto].CoreV1().ConfigMaps(wns).Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			watching++
			watchesWG.Go(func() {
				end := watchEnd{name: name}
				defer func() { ends <- end }()
				timeout := time.After(60 * time.Second)
				for {
					select {
					case ev, ok := <-w.ResultChan():
						if !ok {
							end.closed = true
							return
						}
						if ev.Type == watch.Error {
							end.errs = append(end.errs, fmt.Sprint(apierrors.FromObject(ev.Object)))
						} else {
							end.events++
						}
					case <-timeout:
						w.Stop()
						return
					}
				}
			})
		}
	}

	// Writers: each creates three ConfigMaps of its own, then updates them
	// in turn; data.v is the write's sequence number.
	type ack struct {
		rv    string
		value int
	}
	var (
		mu        sync.Mutex
		acked     = map[string]ack{} // the last acknowledged write of each ConfigMap
		nAcked    atomic.Int64
		stopping  atomic.Bool // SIGTERM sent
		writersWG sync.WaitGroup
		writeEnds []string
	)
	const writersPerProto = 2
	for _, proto := range protocols {
		for w := range writersPerProto {
			writer := fmt.Sprintf("%s-%d", strings.ReplaceAll(proto, "/", ""), w)
			cms := clients[proto].CoreV1().ConfigMaps(ns)
			writersWG.Go(func() {
				objs := map[string]*corev1.ConfigMap{}
				for i := 0; ; i++ {
					if i > 100000 {
						t.Errorf("writer %s: still writing after %d writes", writer, i)
						return
					}
					name := fmt.Sprintf("cm-%s-%d", writer, i%3)
					value := strconv.Itoa(i)
					var (
						out *corev1.ConfigMap
						err error
					)
					if obj := objs[name]; obj == nil {
						out, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}, metav1.CreateOptions{})
					} else {
						obj.Data["v"] = value
						out, err = cms.Update(ctx, obj, metav1.UpdateOptions{})
					}
					if err != nil {
						var urlErr *url.Error
						switch {
						case !stopping.Load():
							t.Errorf("writer %s, write %d of %s before SIGTERM: %v", writer, i, name, err)
						case apierrors.ReasonForError(err) != metav1.StatusReasonUnknown || !errors.As(err, &urlErr):
							t.Errorf("writer %s, write %d of %s after SIGTERM: %v (%T), want a connection error", writer, i, name, err, err)
						}
						mu.Lock()
						writeEnds = append(writeEnds, fmt.Sprintf("%s after %d writes: %v", writer, i, err))
						mu.Unlock()
						return
					}
					objs[name] = out
					mu.Lock()
					acked[name] = ack{rv: out.ResourceVersion, value: i}
					mu.Unlock()
					nAcked.Add(1)
				}
			})
		}
	}

	// SIGTERM once the writers are well under way.
	deadline := time.Now().Add(10 * time.Second)
	for nAcked.Load() < 200 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ackedBefore := nAcked.Load()
	stopping.Store(true)
	took := terminate(t, srv)
	t.Logf("strata exited %v after SIGTERM, with %d writes acknowledged before it", took.Round(time.Millisecond), ackedBefore)

	writersDone := make(chan struct{})
	go func() { writersWG.Wait(); close(writersDone) }()
	select {
	case <-writersDone:
	case <-time.After(30 * time.Second):
		t.Fatal("writers still running 30s after the server exited")
	}
	watchesWG.Wait()
	close(ends)
	ended := 0
	for end := range ends {
		switch {
		case !end.closed:
			t.Errorf("%s: ResultChan still open 60s after it started (%d events)", end.name, end.events)
		case len(end.errs) > 0:
			t.Errorf("%s: ERROR events %q, want the stream to end cleanly", end.name, end.errs)
		case end.events == 0:
			t.Errorf("%s: no event before the end", end.name)
		default:
			ended++
		}
	}
	// The watch responses as the transport saw them.
	rec.mu.Lock()
	streams, answers := rec.watches, rec.answers
	rec.mu.Unlock()
	if len(streams) != watching {
		t.Errorf("%d watch responses recorded, want %d", len(streams), watching)
	}
	cleanBodies := 0
	for _, s := range streams {
		s.mu.Lock()
		if s.err != io.EOF || !s.wholeEvents() {
			t.Errorf("watch %s over %s: body ended with %v after %d bytes (last byte %q), want io.EOF after a whole event",
				s.url, s.proto, s.err, s.n, s.last)
		} else {
			cleanBodies++
		}
		s.mu.Unlock()
	}
	protos := map[string]int{}
	for _, a := range answers {
		protos[a.proto]++
		if a.code >= 500 || a.code < 200 || a.code >= 300 {
			t.Errorf("%s %s over %s: %d, want 2xx", a.method, a.url, a.proto, a.code)
		}
	}
	t.Logf("%d writes acknowledged (%d before SIGTERM); of %d watches, %d closed their ResultChan without an ERROR event "+
		"and %d bodies ended with io.EOF after a whole event; responses by protocol %v",
		nAcked.Load(), ackedBefore, watching, ended, cleanBodies, protos)
	t.Logf("writers' last errors:\n%s", strings.Join(writeEnds, "\n"))
	if protos["HTTP/2.0"] == 0 || protos["HTTP/1.1"] == 0 {
		t.Errorf("responses by protocol %v, want both HTTP/2.0 and HTTP/1.1", protos)
	}

	// Every acknowledged write survives the restart.
	srv = startServer(t, dataDir)
	cfg := srv.restConfig(t)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]corev1.ConfigMap{}
	for _, cm := range list.Items {
		have[cm.Name] = cm
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range acked {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		want := acked[name]
		got, ok := have[name]
		if !ok {
			t.Errorf("ConfigMap %s: acknowledged at resourceVersion %s with v=%d, gone after the restart", name, want.rv, want.value)
			continue
		}
		value, err := strconv.Atoi(got.Data["v"])
		rv, wantRV := rvInt(t, got.ResourceVersion), rvInt(t, want.rv)
		switch {
		case err != nil:
			t.Errorf("ConfigMap %s: data %v", name, got.Data)
		case rv < wantRV || value < want.value || (rv == wantRV) != (value == want.value):
			t.Errorf("ConfigMap %s after the restart: resourceVersion %s with v=%d, want the acknowledged %s with v=%d or a later write",
				name, got.ResourceVersion, value, want.rv, want.value)
		}
	}
	t.Logf("%d ConfigMaps, each at or after its last acknowledged write", len(names))
}

// terminate sends SIGTERM to the server and requires its exit with
// status 0 within shutdownBudget; it returns how long the exit took.
func terminate(t *testing.T, s *server) time.Duration {
	t.Helper()
	s.stopped = true
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(shutdownBudget):
		s.cmd.Process.Kill()
		<-s.exited
		t.Fatalf("strata %v still running %v after SIGTERM; killed", s.args, shutdownBudget)
	}
	if s.waitErr != nil {
		t.Errorf("strata %v after SIGTERM: %v, want exit status 0", s.args, s.waitErr)
	}
	return time.Since(start)
}

// httpRecorder records, below client-go, the status of every response and
// how each watch response's body ended.
type httpRecorder struct {
	mu      sync.Mutex
	answers []httpAnswer
	watches []*bodyEnd
}

type httpAnswer struct {
	method, url, proto string
	code               int
}

// bodyEnd is how a response body ended: the bytes read, the last of them,
// and the first error Read returned (io.EOF for a clean end). A protobuf
// watch stream (client-go's typed clients ask for one) is followed frame
// by frame: a 4-byte big-endian length, then that many bytes.
type bodyEnd struct {
	url, proto string
	body       io.ReadCloser
	protobuf   bool

	mu   sync.Mutex
	n    int64
	last byte
	err  error
	// header holds the bytes of a frame's length read so far; remain is
	// what is left of the frame after its length.
	header []byte
	remain uint32
}

// wholeEvents says whether the body ended after a whole event.
func (b *bodyEnd) wholeEvents() bool {
	if b.protobuf {
		return len(b.header) == 0 && b.remain == 0
	}
	return b.n == 0 || b.last == '\n'
}

// follow advances the frame state over p.
func (b *bodyEnd) follow(p []byte) {
	for len(p) > 0 {
		if b.remain > 0 {
			k := min(uint32(len(p)), b.remain)
			b.remain -= k
			p = p[k:]
			continue
		}
		b.header = append(b.header, p[0])
		p = p[1:]
		if len(b.header) == 4 {
			b.remain = binary.BigEndian.Uint32(b.header)
			b.header = b.header[:0]
		}
	}
}

func (b *bodyEnd) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > 0 {
		b.n += int64(n)
		b.last = p[n-1]
		if b.protobuf {
			b.follow(p[:n])
		}
	}
	if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *bodyEnd) Close() error { return b.body.Close() }

func (r *httpRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.answers = append(r.answers, httpAnswer{method: req.Method, url: req.URL.String(), proto: resp.Proto, code: resp.StatusCode})
		if req.URL.Query().Get("watch") == "true" && resp.StatusCode == http.StatusOK {
			b := &bodyEnd{url: req.URL.String(), proto: resp.Proto, body: resp.Body,
				protobuf: strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf")}
			resp.Body = b
			r.watches = append(r.watches, b)
		}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
