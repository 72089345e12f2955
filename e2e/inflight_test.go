package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The user of TestInFlightLimit's --token-auth-file: authenticated, not in
// system:masters (bound to cluster-admin, so it may write, and is limited).
const (
	floodToken = "e2e-flood-token-5c2e"
	floodUser  = "bob"
)

// A floodRequest is one kind of request of the flood, with what it is
// answered when it is served, and its labels in the request metrics.
type floodRequest struct {
	name     string
	method   string
	path     string
	body     func(name string) string // nil: no body
	want     int
	verb     string
	scope    string
	mutating bool
}

var floodRequests = []floodRequest{
	{name: "list", method: http.MethodGet, path: "/api/v1/namespaces/flood/configmaps",
		want: http.StatusOK, verb: "LIST", scope: "namespace"},
	{name: "get missing", method: http.MethodGet, path: "/api/v1/namespaces/flood/configmaps/missing",
		want: http.StatusNotFound, verb: "GET", scope: "resource"},
	{name: "create", method: http.MethodPost, path: "/api/v1/namespaces/flood/configmaps",
		body: func(name string) string { return configMapJSON(name) },
		want: http.StatusCreated, verb: "POST", scope: "resource", mutating: true}, // CleanScope: a create is "resource"
	{name: "create existing", method: http.MethodPost, path: "/api/v1/namespaces/flood/configmaps",
		body: func(string) string { return configMapJSON("existing") },
		want: http.StatusConflict, verb: "POST", scope: "resource", mutating: true},
}

func configMapJSON(name string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"v"}}`
}

// floodAnswer is what one request of the flood got.
type floodAnswer struct {
	req    floodRequest
	admin  bool
	object string // the ConfigMap a create names
	code   int
	header http.Header
	body   string
	err    error
}

// tooManyRequestsBody is kube-apiserver's text answer beyond the limits
// (http.Error in its max-in-flight filter).
const tooManyRequestsBody = "Too many requests, please try again later.\n"

// TestInFlightLimit floods a server started with --max-requests-inflight 2
// and --max-mutating-requests-inflight 1 with concurrent lists, gets and
// creates: a non-admin user's requests beyond the limits are answered 429
// with Retry-After: 1 and kube-apiserver's text body, and are not carried
// out; every other answer is the one the request gets when it is served
// (never a 5xx, never a dropped connection); the admin (system:masters) is
// never refused; and /metrics counts each 429 in
// apiserver_request_terminations_total and apiserver_request_total, by
// verb, exactly as often as the clients got it.
func TestInFlightLimit(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(floodToken+","+floodUser+",uid-bob,\"dev\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, t.TempDir(), "--max-requests-inflight", "2", "--max-mutating-requests-inflight", "1",
		"--token-auth-file", tokenFile)
	cfg := srv.restConfig(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CAData) {
		t.Fatal("kubeconfig: no CA certificate")
	}
	// HTTP/2, as client-go speaks it: every request of a round on one
	// connection, at once.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	admin := cfg.BearerToken

	send := func(token, method, path, body string) floodAnswer {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(t.Context(), method, cfg.Host+path, rd)
		if err != nil {
			return floodAnswer{err: err}
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return floodAnswer{err: err}
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return floodAnswer{code: resp.StatusCode, header: resp.Header, body: string(data), err: err}
	}
	for _, setup := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"flood"}}`},
		{"/api/v1/namespaces/flood/configmaps", configMapJSON("existing")},
		{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1",` +
			`"kind":"ClusterRoleBinding","metadata":{"name":"flood"},"subjects":[{"kind":"User","name":"` + floodUser + `"}],` +
			`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"}}`},
	} {
		if a := send(admin, http.MethodPost, setup.path, setup.body); a.err != nil || a.code != http.StatusCreated {
			t.Fatalf("POST %s: %d %v\n%s", setup.path, a.code, a.err, a.body)
		}
	}
	// The authorizer learns of the binding from its watch, as
	// kube-apiserver's: the flood starts once bob is allowed.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		a := send(floodToken, http.MethodGet, "/api/v1/namespaces/flood/configmaps", "")
		if a.err == nil && a.code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's list after the binding: %d %v\n%s", a.code, a.err, a.body)
		}
	}

	// Rounds of 200 requests of the user and 40 of the admin, all
	// released at once, until both limits have refused some.
	const userPerKind, adminPerKind, maxRounds = 50, 10, 5
	var answers []floodAnswer
	refusedReads, refusedWrites := 0, 0
	for round := 0; round < maxRounds && (refusedReads == 0 || refusedWrites == 0); round++ {
		var (
			start = make(chan struct{})
			wg    sync.WaitGroup
			mu    sync.Mutex
		)
		for _, fr := range floodRequests {
			for i := range userPerKind + adminPerKind {
				isAdmin := i >= userPerKind
				token := floodToken
				if isAdmin {
					token = admin
				}
				object := fmt.Sprintf("r%d-%s-%d", round, map[bool]string{false: "user", true: "admin"}[isAdmin], i)
				body := ""
				if fr.body != nil {
					body = fr.body(object)
				}
				wg.Go(func() {
					<-start
					a := send(token, fr.method, fr.path, body)
					a.req, a.admin = fr, isAdmin
					if fr.name == "create" {
						a.object = object
					}
					mu.Lock()
					answers = append(answers, a)
					mu.Unlock()
				})
			}
		}
		close(start)
		wg.Wait()
		refusedReads, refusedWrites = 0, 0
		for _, a := range answers {
			if a.code == http.StatusTooManyRequests {
				if a.req.mutating {
					refusedWrites++
				} else {
					refusedReads++
				}
			}
		}
		t.Logf("after round %d: %d answers, %d reads and %d writes refused", round+1, len(answers), refusedReads, refusedWrites)
	}
	if refusedReads == 0 || refusedWrites == 0 {
		t.Errorf("%d read-only and %d mutating requests answered 429, want some of each", refusedReads, refusedWrites)
	}

	// Every answer: 429 in kube-apiserver's form, or what the request
	// gets when served.
	codes := map[string]int{}            // "bob list 200" → count
	refused := map[[2]string]float64{}   // (verb, scope) → 429s
	var created, refusedCreates []string // ConfigMaps named by served and by refused creates
	for _, a := range answers {
		who := map[bool]string{false: floodUser, true: "admin"}[a.admin]
		if a.err != nil {
			t.Errorf("%s %s as %s: %v, want an answer", a.req.method, a.req.path, who, a.err)
			continue
		}
		codes[fmt.Sprintf("%s %s %d", who, a.req.name, a.code)]++
		switch {
		case a.code == a.req.want:
			if a.object != "" {
				created = append(created, a.object)
			}
		case a.code == http.StatusTooManyRequests && !a.admin:
			refused[[2]string{a.req.verb, a.req.scope}]++
			if a.object != "" {
				refusedCreates = append(refusedCreates, a.object)
			}
			if got := a.header.Get("Retry-After"); got != "1" {
				t.Errorf("429 with Retry-After %q, want \"1\"", got)
			}
			if got := a.header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
				t.Errorf("429 with Content-Type %q, want text/plain; charset=utf-8", got)
			}
			if a.body != tooManyRequestsBody {
				t.Errorf("429 with body %q, want %q", a.body, tooManyRequestsBody)
			}
		default:
			t.Errorf("%s %s (%s) as %s: %d, want %d%s\n%s", a.req.method, a.req.path, a.req.name, who, a.code, a.req.want,
				map[bool]string{false: " or 429", true: " (system:masters is never refused)"}[a.admin], a.body)
		}
	}
	t.Logf("answers: %v", codes)

	// A refused create was not carried out; a served one was.
	list := send(admin, http.MethodGet, "/api/v1/namespaces/flood/configmaps", "")
	if list.err != nil || list.code != http.StatusOK {
		t.Fatalf("listing the ConfigMaps: %d %v", list.code, list.err)
	}
	for _, name := range created {
		if !strings.Contains(list.body, `"name":"`+name+`"`) {
			t.Errorf("ConfigMap %s: created (201), not in the list", name)
		}
	}
	for _, name := range refusedCreates {
		if strings.Contains(list.body, `"name":"`+name+`"`) {
			t.Errorf("ConfigMap %s: refused (429), yet created", name)
		}
	}

	// The metrics count each 429, with the request's labels.
	scrape := send(admin, http.MethodGet, "/metrics", "")
	if scrape.err != nil || scrape.code != http.StatusOK {
		t.Fatalf("/metrics: %d %v\n%s", scrape.code, scrape.err, scrape.body)
	}
	families := parseMetrics(t, scrape.body)
	for _, family := range []string{"apiserver_request_terminations_total", "apiserver_request_total"} {
		got := map[[2]string]float64{}
		for _, m := range families[family].GetMetric() {
			labels := labelsOf(m)
			if labels["code"] != "429" {
				continue
			}
			want := map[string]string{"verb": labels["verb"], "group": "", "version": "v1", "resource": "configmaps",
				"subresource": "", "scope": labels["scope"], "component": "apiserver", "code": "429"}
			if family == "apiserver_request_total" {
				want["dry_run"] = ""
			}
			if !maps.Equal(labels, want) {
				t.Errorf("%s series %v, want labels %v", family, labels, want)
			}
			got[[2]string{labels["verb"], labels["scope"]}] += m.GetCounter().GetValue()
		}
		if !maps.Equal(got, refused) {
			t.Errorf("%s{code=\"429\"} by (verb, scope) = %v, want the 429s the clients got: %v", family, got, refused)
		}
	}
	if t.Failed() {
		var lines []string
		for line := range strings.Lines(scrape.body) {
			if strings.Contains(line, `code="429"`) {
				lines = append(lines, strings.TrimSpace(line))
			}
		}
		slices.Sort(lines)
		t.Logf("series with code=\"429\":\n%s", strings.Join(lines, "\n"))
	}
}
