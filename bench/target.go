package bench

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/bench/internal/servers"
)

// target is an API server the cells drive, with the clients of its
// cells. The same clients and cells run against every target.
type target struct {
	side string
	// pid is the server's process, whose CPU time the cells read; 0 when
	// the server runs in this process (not measured).
	pid int
	cfg *rest.Config
	cs  kubernetes.Interface
	// writer is a second clientset, with its own connection, for the
	// watch cells' writes: as with a writer in another process, its
	// requests do not share a connection with the watches.
	writer kubernetes.Interface
	// protobuf and json are clientsets configured for one content type
	// each (protobuf.go); user is the RBAC cells' user (rbac.go).
	protobuf, json, user kubernetes.Interface

	// listItems is how many items a list of the namespace holds: the
	// listed ConfigMaps, and kube-root-ca.crt where the server publishes
	// it (strata does when it runs its root CA publisher; kube-apiserver
	// leaves it to the controller manager).
	listItems int
	// rbacReady: the RBAC cells' bindings exist (rbac.go).
	rbacReady bool
	// updated is each update client's ConfigMap as last written (ops.go).
	updated []*corev1.ConfigMap
}

// newTarget builds the clients of a server reached through cfg.
func newTarget(side string, cfg *rest.Config, pid int) (*target, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 1<<20 // no client-side rate limit
	cfg.UserAgent = "strata-bench"
	t := &target{side: side, pid: pid, cfg: cfg}
	var err error
	if t.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("bench: client-go clientset of %s: %w", side, err)
	}
	if t.protobuf, err = clientsetFor(cfg, runtime.ContentTypeProtobuf); err != nil {
		return nil, err
	}
	if t.json, err = clientsetFor(cfg, runtime.ContentTypeJSON); err != nil {
		return nil, err
	}
	ucfg := rest.AnonymousClientConfig(cfg)
	ucfg.BearerToken = servers.UserToken
	if t.user, err = kubernetes.NewForConfig(ucfg); err != nil {
		return nil, fmt.Errorf("bench: client-go clientset of %s: %w", side, err)
	}
	// client-go shares a transport between configs unless they have a
	// Dial function (which it cannot compare).
	wcfg := rest.CopyConfig(cfg)
	wcfg.Dial = (&net.Dialer{}).DialContext
	if t.writer, err = kubernetes.NewForConfig(wcfg); err != nil {
		return nil, fmt.Errorf("bench: client-go clientset of %s: %w", side, err)
	}
	return t, nil
}

func (t *target) configMaps() typedcorev1.ConfigMapInterface {
	return t.cs.CoreV1().ConfigMaps(layout.Namespace)
}
