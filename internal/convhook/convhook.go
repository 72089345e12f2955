// Package convhook is a CRD conversion webhook for tests: it converts the
// Backends of apiserver/testdata/conversion/backends-crd.yaml between v1
// (spec.host, spec.port) and v2 (spec.address "host:port") over TLS, and
// fails on demand in the ways a webhook can.
package convhook

import (
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/internal/pki"
)

// Mode is how the webhook answers.
type Mode int32

const (
	Convert  Mode = iota // convert, as a correct webhook
	Fail                 // result Failure with FailMessage
	WrongUID             // a response for another request
	Hang                 // no answer until the caller gives up
)

// FailMessage is the result message of the Fail mode.
const FailMessage = "backends cannot be converted today"

// Hook is the conversion webhook.
type Hook struct {
	// Srv is the webhook's server.
	Srv  *httptest.Server
	ca   []byte // PEM of the serving certificate's CA
	mode atomic.Int32
	// Calls counts the reviews received; reviews records the apiVersion
	// of each (ConversionReview v1 or v1beta1).
	Calls   atomic.Int64
	mu      sync.Mutex
	reviews []string
	uids    []types.UID
}

// New starts a webhook on loopback, serving httptest's certificate.
func New(t testing.TB) *Hook {
	h := &Hook{}
	h.Srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Srv.Close)
	h.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.Srv.Certificate().Raw})
	return h
}

// NewFor is a conversion webhook listening on ip, serving a certificate
// for dnsName (internal/pki's CA maker), the name a service reference is
// called by.
func NewFor(t testing.TB, dnsName, ip string) *Hook {
	s, err := pki.EnsureServing(t.TempDir(), []string{dnsName})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := &Hook{ca: s.CAPEM}
	h.Srv = ServeTLSOn(t, ip, cert, http.HandlerFunc(h.serve))
	return h
}

// ServeTLSOn serves handler over TLS with cert on a free port of ip until
// the test ends (httptest listens on 127.0.0.1 only). The admission
// webhook tests serve their hooks with it too.
func ServeTLSOn(t testing.TB, ip string, cert tls.Certificate, handler http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(handler)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// URL is the webhook's clientConfig.url.
func (h *Hook) URL() string { return h.Srv.URL + "/convert" }

// CABundle is the PEM of the CA of the certificate the webhook serves with.
func (h *Hook) CABundle() []byte { return h.ca }

// SetMode sets how the webhook answers from now on.
func (h *Hook) SetMode(m Mode) { h.mode.Store(int32(m)) }

// ReviewVersions are the apiVersions of the reviews received, in order.
func (h *Hook) ReviewVersions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reviews...)
}

func (h *Hook) serve(w http.ResponseWriter, r *http.Request) {
	h.Calls.Add(1)
	var review struct {
		APIVersion string                             `json:"apiVersion"`
		Request    *apiextensionsv1.ConversionRequest `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.reviews = append(h.reviews, review.APIVersion)
	h.uids = append(h.uids, review.Request.UID)
	h.mu.Unlock()
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	switch Mode(h.mode.Load()) {
	case Hang:
		<-r.Context().Done()
		return
	case Fail:
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: FailMessage}
	case WrongUID:
		resp.UID = types.UID("not-" + string(review.Request.UID))
		fallthrough
	default:
		for _, obj := range review.Request.Objects {
			converted, err := convertBackend(obj.Raw, review.Request.DesiredAPIVersion)
			if err != nil {
				resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
				break
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: converted})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	var out any = &apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: review.APIVersion, Kind: "ConversionReview"}, Response: resp}
	if review.APIVersion == apiextensionsv1beta1.SchemeGroupVersion.String() {
		out = &apiextensionsv1beta1.ConversionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: review.APIVersion, Kind: "ConversionReview"},
			Response: &apiextensionsv1beta1.ConversionResponse{UID: resp.UID, ConvertedObjects: resp.ConvertedObjects, Result: resp.Result}}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// convertBackend converts one Backend between v1 and v2.
func convertBackend(raw []byte, to string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]any)
	switch from := obj["apiVersion"]; {
	case from == "stable.example.com/v1" && to == "stable.example.com/v2" && spec != nil:
		port, _ := spec["port"].(float64)
		spec["address"] = net.JoinHostPort(fmt.Sprint(spec["host"]), strconv.Itoa(int(port)))
		delete(spec, "host")
		delete(spec, "port")
	case from == "stable.example.com/v2" && to == "stable.example.com/v1" && spec != nil:
		host, port, err := net.SplitHostPort(fmt.Sprint(spec["address"]))
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, err
		}
		spec["host"], spec["port"] = host, n
		delete(spec, "address")
	case from == to || spec == nil:
	default:
		return nil, fmt.Errorf("cannot convert %v to %s", from, to)
	}
	obj["apiVersion"] = to
	return json.Marshal(obj)
}

// HostPort is the webhook's address, as its errors name it.
func (h *Hook) HostPort() string { return strings.TrimPrefix(h.Srv.URL, "https://") }

// UIDs are the UIDs of the reviews received, in order. (The server under
// test may convert in the background, for its watch caches, so the last
// one need not be the request's a test just made.)
func (h *Hook) UIDs() []types.UID {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.uids)
}
