package bootstrap

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratadev/strata/internal/pki"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// TestAuthenticationInfo: the kube-system ConfigMaps kube-apiserver
// publishes for delegated authentication and legacy token tracking are
// written as its controllers write them: client-ca-file holding the
// --client-ca-file bundle (and, with no request-header authentication, no
// requestheader-* key), since holding the day in UTC.
func TestAuthenticationInfo(t *testing.T) {
	_, client, _ := startAPI(t)
	clientCA := selfSignedPEM(t)
	before := time.Now().UTC().Format("2006-01-02")
	stop, err := AuthenticationInfo{Client: client, ClientCA: clientCA}.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	auth := waitConfigMap(t, client, "extension-apiserver-authentication")
	if want := map[string]string{"client-ca-file": string(clientCA)}; !reflect.DeepEqual(auth.Data, want) {
		t.Errorf("extension-apiserver-authentication data %v, want %v", auth.Data, want)
	}
	tracking := waitConfigMap(t, client, "kube-apiserver-legacy-service-account-token-tracking")
	after := time.Now().UTC().Format("2006-01-02")
	if since := tracking.Data["since"]; len(tracking.Data) != 1 || (since != before && since != after) {
		t.Errorf("legacy token tracking data %v, want since: %s", tracking.Data, after)
	}
}

// TestAuthenticationInfoBadCA: a client CA bundle without a certificate
// is refused, naming what it is for.
func TestAuthenticationInfoBadCA(t *testing.T) {
	_, err := AuthenticationInfo{ClientCA: []byte("not PEM")}.Start()
	if want := "client CA bundle for extension-apiserver-authentication: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want one starting %q", err, want)
	}
}

func waitConfigMap(t *testing.T, client kubernetes.Interface, name string) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		cm, err = client.CoreV1().ConfigMaps("kube-system").Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("kube-system/%s: %v", name, err)
	}
	return cm
}

// selfSignedPEM is a CA certificate in PEM, as --client-ca-file holds.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	creds, err := pki.EnsureServing(t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	return creds.CAPEM
}
