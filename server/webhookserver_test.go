package server

// The admission webhook server the webhook tests call: TLS with a CA
// generated per test, handlers by path, and a record of every
// AdmissionReview received.

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/internal/convhook"
	"github.com/stratadev/strata/internal/pki"
)

// hookServer is the test's webhook server.
type hookServer struct {
	srv *httptest.Server
	// caPEM is the caBundle of the webhook configurations.
	caPEM []byte
	mu    sync.Mutex
	seen  map[string][]*admissionv1.AdmissionRequest // by path
}

// hookServerName is the DNS name a service reference is called by:
// kube-apiserver verifies the certificate for <service>.<namespace>.svc.
const hookServerName = "hook.webhooks.svc"

// startHookServer serves the webhooks on ip (any port) until the test
// ends, with a certificate for ip and hookServerName.
func startHookServer(t *testing.T, ip net.IP) *hookServer {
	t.Helper()
	caPEM, cert := issueHookCert(t, ip)
	h := &hookServer{caPEM: caPEM, seen: map[string][]*admissionv1.AdmissionRequest{}}
	h.srv = convhook.ServeTLSOn(t, ip.String(), cert, http.HandlerFunc(h.serve))
	return h
}

// url is the webhook's clientConfig.url for path.
func (h *hookServer) url(path string) string { return h.srv.URL + path }

// port is the port the server listens on.
func (h *hookServer) port() int32 { return int32(h.srv.Listener.Addr().(*net.TCPAddr).Port) }

// requests are the reviews received on path for the object ns/name.
func (h *hookServer) requests(path, ns, name string) []*admissionv1.AdmissionRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*admissionv1.AdmissionRequest
	for _, r := range h.seen[path] {
		if r.Namespace == ns && r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// awaitCalled waits until a new configuration is in force: kube-apiserver
// reads configurations through an informer, so it makes probes in ns
// (probe writes an object of the name it is given, whatever the answer)
// until the webhook at path has been asked about one, as kube's e2e does.
func (h *hookServer) awaitCalled(t *testing.T, path, ns string, probe func(name string)) {
	t.Helper()
	i := 0
	waitFor(t, "a webhook configuration in force", func() (bool, error) {
		i++
		name := fmt.Sprintf("probe-%d", i)
		probe(name)
		if len(h.requests(path, ns, name)) > 0 {
			return true, nil
		}
		return false, fmt.Errorf("%s not called; reviews by path: %v", path, h.counts())
	})
}

// counts are the numbers of reviews received by path.
func (h *hookServer) counts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := map[string]int{}
	for p, reqs := range h.seen {
		n[p] = len(reqs)
	}
	return n
}

// serve answers a review by the request's path:
//
//	/allow         allowed
//	/deny          refused, 403 "no thanks"
//	/patch         allowed with a JSONPatch: annotation hook.example.com/patched=yes, data.k=patched
//	/label/<name>  allowed, adding the label <name>=yes when the object lacks it
//	/slow          allowed after 3 s (or when the caller gives up)
//	/badpatch      allowed with a JSONPatch that does not apply
func (h *hookServer) serve(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.seen[r.URL.Path] = append(h.seen[r.URL.Path], review.Request)
	h.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	switch path := r.URL.Path; {
	case path == "/deny":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "no thanks"}
	case path == "/patch":
		setPatch(resp, `[{"op":"add","path":"/metadata/annotations","value":{"hook.example.com/patched":"yes"}},`+
			`{"op":"replace","path":"/data/k","value":"patched"}]`)
	case strings.HasPrefix(path, "/label/"):
		name := strings.TrimPrefix(path, "/label/")
		var obj metav1.PartialObjectMetadata
		switch err := json.Unmarshal(review.Request.Object.Raw, &obj); {
		case err != nil || obj.Labels[name] != "":
		case obj.Labels == nil:
			setPatch(resp, `[{"op":"add","path":"/metadata/labels","value":{"`+name+`":"yes"}}]`)
		default:
			setPatch(resp, `[{"op":"add","path":"/metadata/labels/`+name+`","value":"yes"}]`)
		}
	case path == "/badpatch":
		setPatch(resp, `[{"op":"replace","path":"/nothing/here","value":1}]`)
	case path == "/slow":
		select {
		case <-r.Context().Done():
			return
		case <-time.After(3 * time.Second):
		}
	}
	review.Response, review.Request = resp, nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

func setPatch(resp *admissionv1.AdmissionResponse, patch string) {
	resp.Patch, resp.PatchType = []byte(patch), ptr.To(admissionv1.PatchTypeJSONPatch)
}

// issueHookCert issues the webhook server's certificate, for ip and
// hookServerName, with the project's own CA maker (internal/pki), and
// returns the CA's PEM (the caBundle) and the certificate.
func issueHookCert(t *testing.T, ip net.IP) ([]byte, tls.Certificate) {
	t.Helper()
	s, err := pki.EnsureServing(t.TempDir(), []string{ip.String(), hookServerName})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return s.CAPEM, cert
}
