package filters

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// fakeAPI stands for the API handler. Query parameters steer it:
// code=N answers N (default 200); block makes it signal entered with the
// path and wait for release (flush first sends the headers, as a watch
// does); panic=boom, abort or late panics before answering, with
// http.ErrAbortHandler, or after the headers.
type fakeAPI struct {
	entered chan string
	release chan struct{}
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{entered: make(chan string), release: make(chan struct{})}
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch q.Get("panic") {
	case "boom":
		panic("boom")
	case "abort":
		panic(http.ErrAbortHandler)
	case "late":
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		panic("late")
	}
	if q.Has("block") {
		if q.Has("flush") {
			w.(http.Flusher).Flush()
		}
		f.entered <- r.URL.Path
		<-f.release
		if q.Has("flush") {
			return
		}
	}
	code := http.StatusOK
	if c := q.Get("code"); c != "" {
		code, _ = strconv.Atoi(c)
	}
	w.WriteHeader(code)
	io.WriteString(w, "{}")
}

// The users of fakeAuthenticate, by bearer token.
var (
	admin = &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	alice = &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
)

// fakeAuthenticate knows the tokens "admin" and "alice"; /healthz is open
// to anonymous requests; anything else is 401.
func fakeAuthenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var u user.Info
		switch r.Header.Get("Authorization") {
		case "Bearer admin":
			u = admin
		case "Bearer alice":
			u = alice
		case "":
			if r.URL.Path == "/healthz" {
				u = &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
			}
		}
		if u == nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
	})
}

// syncBuffer is a log destination the server's goroutines write to while
// the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testClock is the time of every test server: durations are 0 and the
// in-flight gauges show the highest count since the server started.
var testClock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testServer serves Chain around a fakeAPI with its own metrics on
// testClock, a JSON log at Debug and fakeAuthenticate; cfg may set the
// limits.
type testServer struct {
	*httptest.Server
	api     *fakeAPI
	metrics *Metrics
	log     *syncBuffer
}

func newTestServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	s := &testServer{api: newFakeAPI(), metrics: NewMetrics(), log: &syncBuffer{}}
	s.metrics.now = func() time.Time { return testClock }
	cfg.Metrics = s.metrics
	cfg.Logger = slog.New(slog.NewJSONHandler(s.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Authenticate = fakeAuthenticate
	s.Server = httptest.NewServer(Chain(s.api, cfg))
	t.Cleanup(s.Close)
	return s
}

// do sends a request with the token (none if empty) and returns the
// response with its body read.
func (s *testServer) do(t *testing.T, method, path, token string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp, string(body)
}

// scrape reads /metrics over HTTP, as the admin, in the text format.
func (s *testServer) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := s.do(t, http.MethodGet, "/metrics", "admin")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s: %s", resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v\n%s", err, body)
	}
	return families
}

// values maps each series of a family (by seriesKey) to its value: a
// counter's or gauge's value, a histogram's sample count.
func values(families map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	f, ok := families[name]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		var v float64
		switch {
		case m.Counter != nil:
			v = m.GetCounter().GetValue()
		case m.Gauge != nil:
			v = m.GetGauge().GetValue()
		case m.Histogram != nil:
			v = float64(m.GetHistogram().GetSampleCount())
		}
		out[seriesKey(m.GetLabel())] = v
	}
	return out
}

// seriesKey writes labels as name="value" pairs in name order.
func seriesKey(pairs []*dto.LabelPair) string {
	var parts []string
	for _, p := range pairs {
		parts = append(parts, fmt.Sprintf("%s=%q", p.GetName(), p.GetValue()))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// key builds a seriesKey from name, value pairs.
func key(kv ...string) string {
	var pairs []*dto.LabelPair
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, &dto.LabelPair{Name: &kv[i], Value: &kv[i+1]})
	}
	return seriesKey(pairs)
}
