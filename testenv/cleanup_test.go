package testenv_test

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stratadev/strata/testenv"
)

// serverCode names the code whose goroutines a stopped server must not
// leave behind: strata's, etcd's, the API server libraries', client-go's
// requests and HTTP connections.
var serverCode = []string{"github.com/stratadev/strata/", "go.etcd.io/", "k8s.io/apiserver/",
	"k8s.io/client-go/", "net/http."}

// processWide are the goroutines upstream starts once per process, not
// per server: the log health check's flush loop (healthz.LogHealthz, a
// sync.Once).
var processWide = []string{"created by k8s.io/apiserver/pkg/server/healthz.(*log).Check"}

// A stopped server leaves no goroutine of its code running and no port
// open (the test binary's goroutines are checked: not parallel).
func TestCleanupLeavesNothingRunning(t *testing.T) {
	s := &scope{TB: t}
	cfg := testenv.Start(s)
	if _, err := clientFor(t, cfg).Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	s.end()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	if conn, err := net.Dial("tcp", u.Host); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after the cleanup", u.Host)
	}
	// Goroutines end as they see the stop, not all before it returns: a
	// leak is one still there after five seconds.
	var left []string
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		left = serverGoroutines(t)
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("%d goroutines of the server still run after its cleanup:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// serverGoroutines are the stacks of the goroutines running serverCode,
// other than this test's.
func serverGoroutines(t *testing.T) []string {
	var dump bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&dump, 2); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, g := range strings.Split(dump.String(), "\n\n") {
		if strings.Contains(g, "TestCleanupLeavesNothingRunning") ||
			slices.ContainsFunc(processWide, func(p string) bool { return strings.Contains(g, p) }) {
			continue
		}
		for _, code := range serverCode {
			if strings.Contains(g, code) {
				left = append(left, g)
				break
			}
		}
	}
	return left
}
