package testenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratadev/strata/testenv"
)

// denyForbidden is a validating webhook: it refuses objects whose name
// starts with "forbidden".
func denyForbidden(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if strings.HasPrefix(review.Request.Name, "forbidden") {
		resp.Allowed, resp.Result = false, &metav1.Status{Message: "no forbidden configmaps"}
	}
	review.Response, review.Request = resp, nil
	_ = json.NewEncoder(w).Encode(&review)
}

// serveWebhooks serves handler as controller-runtime's webhook server
// would, from o's certificate directory, host and port, until the test ends.
func serveWebhooks(t *testing.T, o *testenv.WebhookInstallOptions, handler http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeTLS(ln, filepath.Join(o.LocalServingCertDir, "tls.crt"), filepath.Join(o.LocalServingCertDir, "tls.key"))
	}()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("webhook server: %v", err)
		}
	})
}

// A validating webhook configuration naming a service is installed
// against the test's server: the API server calls it there, trusting its
// CA.
func TestWebhooksCallTheTestsServer(t *testing.T) {
	path, fail, none := "/validate-configmaps", admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	hooks := &testenv.WebhookInstallOptions{ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-forbidden"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.example.com", FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "system", Name: "webhook-service", Path: &path}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		}},
	}}}
	c := clientFor(t, testenv.Start(t, testenv.Webhooks(hooks)))
	mux := http.NewServeMux()
	mux.HandleFunc(path, denyForbidden)
	serveWebhooks(t, hooks, mux)

	got, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), "deny-forbidden", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("https://127.0.0.1:%d/validate-configmaps", hooks.LocalServingPort)
	if cc := got.Webhooks[0].ClientConfig; cc.URL == nil || *cc.URL != want || cc.Service != nil || string(cc.CABundle) != string(hooks.LocalServingCAData) {
		t.Errorf("installed clientConfig: url %v, service %v, caBundle of %d bytes; want %s, no service, the local CA", cc.URL, cc.Service, len(cc.CABundle), want)
	}
	// The configuration reaches the server's admission through its
	// informers: until then creates pass, under new names each time.
	const denied = `admission webhook "deny.example.com" denied the request: no forbidden configmaps`
	n := 0
	eventually(t, "the webhook denies a forbidden ConfigMap", func(ctx context.Context) (bool, error) {
		n++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("forbidden-%d", n), Namespace: "default"}}
		_, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
		return err != nil && err.Error() == denied, err
	})
	if _, err := c.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "allowed", Namespace: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("creating a ConfigMap the webhook allows: %v", err)
	}
}
