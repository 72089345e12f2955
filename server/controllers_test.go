package server

// Tests of the kube-controller-manager controllers strata runs, through
// client-go against whole servers: the quota controller's status.used,
// --controllers, and the leader election among servers sharing one etcd.
// The controllers work asynchronously, so the tests poll with a deadline.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

// ctlDeadline bounds each wait for a controller.
const ctlDeadline = 30 * time.Second

// ctlServer is a server started for a controllers test, with its log.
type ctlServer struct {
	o       *Options
	client  kubernetes.Interface
	dynamic dynamic.Interface
	log     *syncBuffer
	stop    func()
}

// startCtlServer starts a server whose controllers look at discovery and
// recalculate quotas every second, with edits of the options; it stops
// when the test ends, or before with stop.
func startCtlServer(t *testing.T, edit func(*Options)) *ctlServer {
	t.Helper()
	o := NewOptions()
	o.DataDir, o.SecurePort = filepath.Join(t.TempDir(), "data"), 0
	o.controllers.syncPeriod, o.controllers.quotaResync = time.Second, time.Second
	buf := &syncBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(buf, nil))
	if edit != nil {
		edit(o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := r.Wait(); err != nil {
				t.Errorf("server stopped: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	cfg, err := clientcmd.BuildConfigFromFlags("", r.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1
	return &ctlServer{o: o, client: kubernetes.NewForConfigOrDie(cfg), dynamic: dynamic.NewForConfigOrDie(cfg), log: buf, stop: stop}
}

// fixtureGVRs are the resources of the kinds in testdata/quota.
var fixtureGVRs = map[string]schema.GroupVersionResource{
	"ConfigMap":                {Version: "v1", Resource: "configmaps"},
	"Secret":                   {Version: "v1", Resource: "secrets"},
	"Service":                  {Version: "v1", Resource: "services"},
	"Pod":                      {Version: "v1", Resource: "pods"},
	"PersistentVolumeClaim":    {Version: "v1", Resource: "persistentvolumeclaims"},
	"ResourceQuota":            {Version: "v1", Resource: "resourcequotas"},
	"Deployment":               {Group: "apps", Version: "v1", Resource: "deployments"},
	"Gizmo":                    {Group: "example.com", Version: "v1", Resource: "gizmos"},
	"CustomResourceDefinition": {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
}

// createFixtures creates the objects of a testdata/quota file in ns ("":
// cluster-scoped).
func (s *ctlServer) createFixtures(t *testing.T, file, ns string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "quota", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			t.Fatalf("%s: %v", file, err)
		}
		if obj.Object == nil {
			continue
		}
		gvr, ok := fixtureGVRs[obj.GetKind()]
		if !ok {
			t.Fatalf("%s: no resource for kind %q", file, obj.GetKind())
		}
		if _, err := s.dynamic.Resource(gvr).Namespace(ns).Create(context.Background(), &obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: create %s %s: %v", file, obj.GetKind(), obj.GetName(), err)
		}
	}
}

// createNamespace creates ns and waits for the kube-root-ca.crt the
// publisher puts in it, so that counts of configmaps are exact.
func (s *ctlServer) createNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, ctlDeadline, "kube-root-ca.crt in "+ns, func() (bool, error) {
		_, err := s.client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, err
	})
}

// createGizmos creates the gizmos CRD and waits until it is established.
func (s *ctlServer) createGizmos(t *testing.T) {
	t.Helper()
	s.createFixtures(t, "gizmos-crd.yaml", "")
	crds := s.dynamic.Resource(fixtureGVRs["CustomResourceDefinition"])
	waitWithin(t, ctlDeadline, "the gizmos CRD is established", func() (bool, error) {
		u, err := crds.Get(context.Background(), "gizmos.example.com", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
			return false, err
		}
		return established(&crd), nil
	})
}

// quantities is a resource list as strings, to compare exactly.
func quantities(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for name, q := range l {
		out[string(name)] = q.String()
	}
	return out
}

// waitUsed waits until quota ns/name's status.used is want (and its
// status.hard its spec.hard).
func (s *ctlServer) waitUsed(t *testing.T, ns, name, what string, want map[string]string) {
	t.Helper()
	var last map[string]string
	waitWithin(t, ctlDeadline, what, func() (bool, error) {
		q, err := s.client.CoreV1().ResourceQuotas(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = quantities(q.Status.Used)
		return equalMaps(last, want) && equalMaps(quantities(q.Status.Hard), quantities(q.Spec.Hard)), nil
	})
	t.Logf("%s: status.used %v", what, last)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestResourceQuotaStatus: the quota controller keeps status.hard and
// status.used of a ResourceQuota current: counts of configmaps, secrets,
// services, pods, persistentvolumeclaims and of objects of a built-in and
// a custom kind (count/<resource>.<group>), made before the quota;
// deletions lower them at once; creations are charged by the ResourceQuota
// admission plugin as they are made, and the controller's full
// recalculation (every second here) agrees.
func TestResourceQuotaStatus(t *testing.T) {
	t.Parallel()
	s := startCtlServer(t, nil)
	const ns = "quota"
	s.createGizmos(t)
	s.createNamespace(t, ns)
	s.createFixtures(t, "objects.yaml", ns)
	s.createFixtures(t, "quota.yaml", ns)
	used := map[string]string{"configmaps": "3", "secrets": "1", "services": "1", "pods": "1",
		"persistentvolumeclaims": "1", "count/deployments.apps": "1", "count/gizmos.example.com": "2"}
	s.waitUsed(t, ns, "counts", "status.used of the objects made before the quota", used)

	for _, del := range []struct{ kind, name string }{
		{"ConfigMap", "cm-1"}, {"Secret", "secret-1"}, {"Pod", "pod-1"}, {"Gizmo", "gizmo-1"}, {"Deployment", "deploy-1"},
	} {
		if err := s.dynamic.Resource(fixtureGVRs[del.kind]).Namespace(ns).Delete(context.Background(), del.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	used["configmaps"], used["secrets"], used["pods"], used["count/gizmos.example.com"], used["count/deployments.apps"] = "2", "0", "0", "1", "0"
	s.waitUsed(t, ns, "counts", "status.used after deletions", used)

	for _, name := range []string{"secret-2", "secret-3"} {
		// The quota admission charges the quota in an update that races
		// the controller's recalculation (every second here); after its
		// own retries it answers 409, as kube-apiserver's does, and a
		// client tries again.
		err := retry.OnError(retry.DefaultRetry, apierrors.IsConflict, func() error {
			_, err := s.client.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	used["secrets"] = "2"
	s.waitUsed(t, ns, "counts", "status.used after creations", used)
}

// startedControllers are the controllers a server's log says it started.
func startedControllers(log string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if _, rest, ok := strings.Cut(line, `msg="Started controller" controller=`); ok {
			out = append(out, strings.Fields(rest)[0])
		}
	}
	return out
}
