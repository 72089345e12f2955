package server

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stratadev/strata/internal/pki"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// TestExtensionAPIServerAuthentication: a server with --client-ca-file
// publishes it in kube-system/extension-apiserver-authentication, where
// kube-controller-manager and kube-scheduler look it up, and the legacy
// token tracking ConfigMap, as kube-apiserver does.
func TestExtensionAPIServerAuthentication(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "client-ca.crt")
	caPEM := testCAPEM(t)
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTestServer(t, nil, func(o *Options) { o.ClientCAFile = caFile })
	client := kubernetes.NewForConfigOrDie(s.admin)
	for name, want := range map[string]map[string]string{
		"extension-apiserver-authentication":                   {"client-ca-file": string(caPEM)},
		"kube-apiserver-legacy-service-account-token-tracking": nil,
	} {
		var data map[string]string
		err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			cm, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			data = cm.Data
			return true, nil
		})
		if err != nil {
			t.Fatalf("kube-system/%s: %v", name, err)
		}
		if want != nil && !reflect.DeepEqual(data, want) {
			t.Errorf("kube-system/%s data %v, want %v", name, data, want)
		}
	}
}

// testCAPEM is a CA certificate in PEM, as --client-ca-file holds.
func testCAPEM(t *testing.T) []byte {
	t.Helper()
	creds, err := pki.EnsureServing(t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return creds.CAPEM
}
