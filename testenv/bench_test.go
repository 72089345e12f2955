package testenv_test

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/testenv"
)

// BenchmarkStartStop starts a server, makes one request through its
// rest.Config (so that "started" means usable), and stops it; start-ms is
// Start to the request's answer, stop-ms the teardown. The first start in
// a process (OpenAPI documents, type models: shared by the later ones) is
// made before the timer starts.
func BenchmarkStartStop(b *testing.B) {
	warm := &scope{TB: b}
	testenv.Start(warm)
	warm.end()
	var starting, stopping time.Duration
	for b.Loop() {
		s := &scope{TB: b}
		t0 := time.Now()
		cfg := testenv.Start(s)
		if _, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		s.end()
		starting += t1.Sub(t0)
		stopping += time.Since(t1)
	}
	b.ReportMetric(float64(starting.Microseconds())/1000/float64(b.N), "start-ms")
	b.ReportMetric(float64(stopping.Microseconds())/1000/float64(b.N), "stop-ms")
}

// BenchmarkRSSPerServer runs servers beside one another, each having
// answered a request, and reports the process's resident memory they add,
// per server, over the first one's.
func BenchmarkRSSPerServer(b *testing.B) {
	const servers = 5
	for b.Loop() {
		s := &scope{TB: b}
		testenv.Start(s)
		runtime.GC()
		base := rssBytes(b)
		for range servers {
			cfg := testenv.Start(s)
			if _, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion(); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		b.ReportMetric(float64(rssBytes(b)-base)/servers/(1<<20), "MiB-RSS/server")
		s.end()
	}
}

// rssBytes is the process's resident set size (VmRSS of /proc/self/status).
func rssBytes(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range bytes.Lines(data) {
		if f := bytes.Fields(line); len(f) == 3 && string(f[0]) == "VmRSS:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// BenchmarkParallelServers starts 20 servers at once, as 20 parallel tests
// would, makes a request of each, and stops them; ms/server is the wall
// time over the servers.
func BenchmarkParallelServers(b *testing.B) {
	const servers = 20
	warm := &scope{TB: b}
	testenv.Start(warm)
	warm.end()
	for b.Loop() {
		scopes := make([]*scope, servers)
		errs := make(chan error, servers)
		for i := range scopes {
			scopes[i] = &scope{TB: b}
		}
		var wg sync.WaitGroup
		for _, s := range scopes {
			wg.Go(func() {
				// A failed Start calls b.Fatalf on this goroutine: that
				// ends the goroutine (wg.Go's Done still runs) and marks
				// the benchmark failed.
				cfg := testenv.Start(s)
				_, err := kubernetes.NewForConfigOrDie(cfg).Discovery().ServerVersion()
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Error(err)
			}
		}
		for _, s := range scopes {
			s.end()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*servers), "ms/server")
}
