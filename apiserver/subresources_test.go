package apiserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// csrPEM is a PEM certificate request for CN=name.
func csrPEM(t *testing.T, name string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestCSRApproval approves a CertificateSigningRequest as kubectl
// certificate approve does (client-go's UpdateApproval): only the
// conditions change (a changed spec or certificate in the body is
// ignored, as upstream's approval strategy ignores them), and an
// Approved condition cannot be withdrawn.
func TestCSRApproval(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	csrs := ts.client.CertificatesV1().CertificateSigningRequests()
	csr, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, "alice"), SignerName: "example.com/signer",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "KubectlApprove",
		Message: "This CSR was approved by kubectl certificate approve."})
	csr.Spec.SignerName = "example.com/other"
	csr.Status.Certificate = []byte("not yours to set")
	out, err := csrs.UpdateApproval(ctx, "alice", csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateApproval: %v", err)
	}
	if c := out.Status.Conditions; len(c) != 1 || c[0].Type != certificatesv1.CertificateApproved || c[0].LastUpdateTime.IsZero() {
		t.Errorf("conditions %+v, want Approved with its timestamps filled", c)
	}
	if out.Spec.SignerName != "example.com/signer" || len(out.Status.Certificate) != 0 {
		t.Errorf("signer %q certificate %q: the approval changed more than the conditions", out.Spec.SignerName, out.Status.Certificate)
	}
	out.Status.Conditions = nil
	_, err = csrs.UpdateApproval(ctx, "alice", out, metav1.UpdateOptions{})
	checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid,
		prefix: `CertificateSigningRequest.certificates.k8s.io "alice" is invalid: status.conditions: Forbidden: updates may not remove a condition of type "Approved"`})
	res := rawCall(t, ts, "GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval", nil, nil)
	if res.code != 200 || !strings.Contains(string(res.body), `"kind":"CertificateSigningRequest"`) {
		t.Errorf("GET approval: %d %s", res.code, res.body)
	}
}

// TestEphemeralContainers adds a debug container to a pod as kubectl debug
// does, through pods/ephemeralcontainers (client-go's
// UpdateEphemeralContainers, and a strategic merge patch): other spec
// changes in the body are dropped by upstream's EphemeralContainersStrategy,
// and the pod itself refuses the same change.
func TestEphemeralContainers(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pods := ts.client.CoreV1().Pods("default")
	pod, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	debugger := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger",
		Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}}
	changed := pod.DeepCopy()
	changed.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger}
	_, err = pods.Update(ctx, changed, metav1.UpdateOptions{})
	checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid, prefix: `Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than`})

	changed.Spec.Containers[0].Image = "httpd"
	out, err := pods.UpdateEphemeralContainers(ctx, "p", changed, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateEphemeralContainers: %v", err)
	}
	if len(out.Spec.EphemeralContainers) != 1 || out.Spec.EphemeralContainers[0].Name != "debugger" || out.Spec.Containers[0].Image != "nginx" {
		t.Errorf("after UpdateEphemeralContainers: ephemeral %+v, image %q", out.Spec.EphemeralContainers, out.Spec.Containers[0].Image)
	}
	patch := `{"spec":{"ephemeralContainers":[{"name":"debugger-2","image":"busybox","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}]}}`
	out, err = pods.Patch(ctx, "p", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "ephemeralcontainers")
	if err != nil {
		t.Fatalf("patch ephemeralcontainers: %v", err)
	}
	var names []string
	for _, c := range out.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"debugger", "debugger-2"}) {
		t.Errorf("ephemeral containers after the patch: %v", names)
	}
	out.Spec.EphemeralContainers = out.Spec.EphemeralContainers[:1]
	_, err = pods.UpdateEphemeralContainers(ctx, "p", out, metav1.UpdateOptions{})
	checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid, prefix: `Pod "p" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger-2" may not be removed`})
}

// TestResize resizes a pod's container through pods/resize (client-go's
// UpdateResize): the resources change, anything else in the body is
// dropped by upstream's ResizeStrategy.
func TestResize(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pods := ts.client.CoreV1().Pods("default")
	cpu := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse(q)},
			Limits: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse(q)}}
	}
	pod, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: cpu("100m")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.Containers[0].Resources = cpu("200m")
	pod.Spec.Containers[0].Image = "httpd"
	out, err := pods.UpdateResize(ctx, "p", pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateResize: %v", err)
	}
	c := out.Spec.Containers[0]
	if got := c.Resources.Requests[corev1.ResourceCPU]; got.String() != "200m" || c.Image != "nginx" {
		t.Errorf("after resize: cpu request %s, image %q; want 200m and nginx", got.String(), c.Image)
	}
	res := rawCall(t, ts, "GET", "/api/v1/namespaces/default/pods/p/resize", nil, nil)
	if res.code != 200 || !strings.Contains(string(res.body), `"cpu":"200m"`) {
		t.Errorf("GET resize: %d %s", res.code, res.body)
	}
}

// TestNamespaceFinalize writes a namespace's spec.finalizers through
// namespaces/finalize (client-go's Finalize), which answers PUT only; its
// status is kept and the finalizers validated.
func TestNamespaceFinalize(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	namespaces := ts.client.CoreV1().Namespaces()
	ns, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fin"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Spec.Finalizers = append(ns.Spec.Finalizers, "example.com/cleanup")
	ns.Status.Phase = corev1.NamespaceTerminating
	out, err := namespaces.Finalize(ctx, ns, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	if !slices.Equal(out.Spec.Finalizers, []corev1.FinalizerName{"kubernetes", "example.com/cleanup"}) || out.Status.Phase != corev1.NamespaceActive {
		t.Errorf("after Finalize: finalizers %v, phase %s", out.Spec.Finalizers, out.Status.Phase)
	}
	out.Spec.Finalizers = []corev1.FinalizerName{"not a name"}
	_, err = namespaces.Finalize(ctx, out, metav1.UpdateOptions{})
	checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid, prefix: `Namespace "fin" is invalid: [spec.finalizers[0]: Invalid value: "not a name": name part must consist of`})
	for _, method := range []string{"GET", "PATCH"} {
		res := rawCall(t, ts, method, "/api/v1/namespaces/fin/finalize", map[string]string{"Content-Type": "application/merge-patch+json"}, []byte(`{}`))
		if res.code != 405 {
			t.Errorf("%s finalize: %d %s, want 405", method, res.code, res.body)
		}
	}
}

// TestSubresourcesOpenAPI: the OpenAPI v3 documents describe the
// subresources written through a strategy of their own with kube-apiserver's
// operations (namespaces/finalize: PUT only).
func TestSubresourcesOpenAPI(t *testing.T) {
	ts := newTestServer(t)
	docs := map[string]struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}{}
	for _, doc := range []string{"api/v1", "apis/certificates.k8s.io/v1"} {
		res := rawCall(t, ts, "GET", "/openapi/v3/"+doc, nil, nil)
		var d = docs[doc]
		if err := json.Unmarshal(res.body, &d); res.code != 200 || err != nil {
			t.Fatalf("GET /openapi/v3/%s: %d %v", doc, res.code, err)
		}
		docs[doc] = d
	}
	tests := []struct{ doc, path, method, id string }{
		{"api/v1", "/api/v1/namespaces/{name}/finalize", "put", "replaceCoreV1NamespaceFinalize"},
		{"api/v1", "/api/v1/namespaces/{name}/finalize", "get", ""},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers", "patch", "patchCoreV1NamespacedPodEphemeralcontainers"},
		{"api/v1", "/api/v1/namespaces/{namespace}/pods/{name}/resize", "put", "replaceCoreV1NamespacedPodResize"},
		{"apis/certificates.k8s.io/v1", "/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}/approval", "put",
			"replaceCertificatesV1CertificateSigningRequestApproval"},
	}
	for _, tc := range tests {
		var op struct {
			OperationID string `json:"operationId"`
		}
		if raw, ok := docs[tc.doc].Paths[tc.path][tc.method]; ok {
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
		}
		if op.OperationID != tc.id {
			t.Errorf("%s %s: operationId %q, want %q", tc.method, tc.path, op.OperationID, tc.id)
		}
	}
}
