package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeManifest writes a manifest for kubectl create -f.
func writeManifest(t *testing.T, name, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// testDrain drains a node as an administrator does: kubectl drain cordons
// it and evicts its pod through pods/eviction. While the pod's
// PodDisruptionBudget allows no disruption, drain is refused with the
// budget's 429 and keeps retrying until its timeout; once the budget
// allows one, the pod is evicted and the node drained.
func testDrain(t *testing.T, k *kubectl, ns string) {
	node := "node-" + ns
	k.exact(t, "node/"+node+" created\n", "create", "-f", writeManifest(t, "node.json",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"`+node+`"}}`))
	k.exact(t, "pod/web created\n", "create", "-n", ns, "-f", writeManifest(t, "pod.json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},
		 "spec":{"nodeName":"`+node+`","containers":[{"name":"c","image":"nginx"}]}}`))
	// No kubelet runs: the pod is made Running and Ready, and the budget's
	// status written, as the kubelet and the disruption controller would.
	k.exact(t, "pod/web patched\n", "patch", "pod", "web", "-n", ns, "--subresource=status", "--type=merge", "-p",
		`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	k.exact(t, "poddisruptionbudget.policy/web created\n", "create", "pdb", "web", "--selector=app=web", "--min-available=1", "-n", ns)
	budget := func(allowed string) {
		k.exact(t, "poddisruptionbudget.policy/web patched\n", "patch", "pdb", "web", "-n", ns, "--subresource=status", "--type=merge", "-p",
			`{"status":{"observedGeneration":1,"disruptionsAllowed":`+allowed+`,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1}}`)
	}
	budget("0")
	r := k.run(t, "drain", node, "--force", "--timeout=3s")
	if r.code == 0 || !strings.Contains(r.stderr, "Cannot evict pod as it would violate the pod's disruption budget.") ||
		!strings.Contains(r.stdout, "node/"+node+" cordoned") {
		t.Fatalf("drain against an exhausted budget: want cordoned, then refused with the budget's error\n%v", r)
	}
	k.exact(t, "pod/web\n", "get", "pod", "web", "-n", ns, "-o", "name")

	budget("1")
	r = k.run(t, "drain", node, "--force", "--timeout=30s")
	if r.code != 0 || !strings.Contains(r.stdout, "pod/web evicted") || !strings.Contains(r.stdout, "node/"+node+" drained") {
		t.Fatalf("drain: want pod/web evicted and the node drained\n%v", r)
	}
	k.exact(t, "", "get", "pods", "-n", ns, "-o", "name")
	if out := k.ok(t, "get", "pdb", "web", "-n", ns, "-o", "jsonpath={.status.disruptionsAllowed} {.status.disruptedPods.web}"); !strings.HasPrefix(out, "0 20") {
		t.Errorf("budget after the eviction: %q, want disruptionsAllowed 0 and web's eviction time", out)
	}
	k.exact(t, "true", "get", "node", node, "-o", "jsonpath={.spec.unschedulable}")
	k.exact(t, "node \""+node+"\" deleted\n", "delete", "node", node)
}

// testCertificateApprove approves a CertificateSigningRequest with kubectl
// certificate approve (certificatesigningrequests/approval).
func testCertificateApprove(t *testing.T, k *kubectl, ns string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: ns}}, key)
	if err != nil {
		t.Fatal(err)
	}
	request := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	name := "csr-" + ns
	k.exact(t, "certificatesigningrequest.certificates.k8s.io/"+name+" created\n", "create", "-f", writeManifest(t, "csr.json",
		`{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"`+name+`"},
		 "spec":{"request":"`+request+`","signerName":"example.com/signer","usages":["digital signature"]}}`))
	k.exact(t, "certificatesigningrequest.certificates.k8s.io/"+name+" approved\n", "certificate", "approve", name)
	k.exact(t, "Approved True KubectlApprove", "get", "csr", name, "-o",
		"jsonpath={.status.conditions[0].type} {.status.conditions[0].status} {.status.conditions[0].reason}")
	k.exact(t, "certificatesigningrequest.certificates.k8s.io \""+name+"\" deleted\n", "delete", "csr", name)
}
