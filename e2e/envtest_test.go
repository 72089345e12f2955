package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var webAppGVK = schema.GroupVersionKind{Group: "apps.example.com", Version: "v1", Kind: "WebApp"}

// envtestAssets writes strata-server's envtest assets into a directory of
// the test's and points KUBEBUILDER_ASSETS at it, as a user would.
func envtestAssets(t testing.TB) {
	t.Helper()
	needBinaries(t)
	dir := t.TempDir()
	out, err := exec.Command(filepath.Join(filepath.Dir(strataBin), "strata-server"), "envtest-assets", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("strata-server envtest-assets: %v\n%s", err, out)
	}
	t.Setenv("KUBEBUILDER_ASSETS", dir)
}

// startEnvtest starts controller-runtime's envtest as a kubebuilder
// suite does, on the assets KUBEBUILDER_ASSETS names.
func startEnvtest(t *testing.T) (*envtest.Environment, *rest.Config) {
	t.Helper()
	// controller-runtime's logs are not the test's subject; set, they are
	// not reported as missing.
	ctrl.SetLogger(logr.Discard())
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("testdata", "envtest", "crds")}, ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{webAppWebhook()}}}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest: stopping: %v", err)
		}
	})
	return env, cfg
}

// TestEnvtestSuiteOnStrata runs what a kubebuilder project's envtest
// suite does, on strata's assets: CRDs installed from their directory, a
// manager running a reconciler that creates owned objects and updates
// status, and a user of AddUser refused by RBAC.
func TestEnvtestSuiteOnStrata(t *testing.T) {
	envtestAssets(t)
	env, cfg := startEnvtest(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "suite"}}); err != nil {
		t.Fatal(err)
	}
	// As with kube-apiserver alone: no kube-root-ca.crt, no default
	// ServiceAccount in a new namespace.
	var cms corev1.ConfigMapList
	var sas corev1.ServiceAccountList
	if err := c.List(ctx, &cms, client.InNamespace("suite")); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &sas, client.InNamespace("suite")); err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 0 || len(sas.Items) != 0 {
		t.Errorf("a new namespace holds %d ConfigMaps and %d ServiceAccounts, want none", len(cms.Items), len(sas.Items))
	}
	checkAddUser(t, env)
	runWebAppController(t, env, cfg)
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(webAppGVK)
	app.SetNamespace("suite")
	app.SetName("shop")
	app.Object["spec"] = map[string]any{"image": "nginx:1.29", "replicas": int64(2)}
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reconciler's Deployment, Service and ConfigMap, and status.ready", func(ctx context.Context) (bool, error) {
		for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &corev1.ConfigMap{}} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "suite", Name: "shop"}, obj); err != nil {
				return false, err
			}
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(webAppGVK)
		if err := c.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			return false, err
		}
		ready, _, _ := unstructured.NestedBool(got.Object, "status", "ready")
		return ready, nil
	})
	var dep appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: "suite", Name: "shop"}, &dep); err != nil {
		t.Fatal(err)
	}
	if refs := dep.OwnerReferences; len(refs) != 1 || refs[0].Kind != "WebApp" || refs[0].Name != "shop" || *refs[0].Controller != true {
		t.Errorf("the Deployment's owners: %+v, want the WebApp shop as controller", refs)
	}
	// A WebApp with no image is refused by the CRD's schema.
	bad := &unstructured.Unstructured{}
	bad.SetGroupVersionKind(webAppGVK)
	bad.SetNamespace("suite")
	bad.SetName("bad")
	bad.Object["spec"] = map[string]any{"replicas": int64(1)}
	const invalid = `WebApp.apps.example.com "bad" is invalid: spec.image: Required value`
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) || err.Error() != invalid {
		t.Errorf("creating a WebApp without an image: %v, want %s", err, invalid)
	}
	// One with too many replicas, by the validating webhook envtest
	// installed against the manager's webhook server.
	bad.Object["spec"] = map[string]any{"image": "nginx", "replicas": int64(11)}
	const denied = `admission webhook "vwebapp.apps.example.com" denied the request: spec.replicas: 11 is over 10`
	if err := c.Create(ctx, bad); err == nil || err.Error() != denied {
		t.Errorf("creating a WebApp with 11 replicas: %v, want %s", err, denied)
	}
}

const webAppWebhookPath = "/validate-apps-example-com-v1-webapp"

// webAppWebhook is the configuration controller-gen writes for a
// kubebuilder validating webhook: a service reference, which envtest
// points at the manager's webhook server.
func webAppWebhook() *admissionregistrationv1.ValidatingWebhookConfiguration {
	path, fail, none := webAppWebhookPath, admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "validating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "vwebapp.apps.example.com", FailurePolicy: &fail, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "system", Name: "webhook-service", Path: &path}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps.example.com"}, APIVersions: []string{"v1"}, Resources: []string{"webapps"}}}},
		}}}
}

// validateWebApp refuses WebApps of more than 10 replicas.
func validateWebApp(_ context.Context, req admission.Request) admission.Response {
	app := &unstructured.Unstructured{}
	if err := app.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if n, _, _ := unstructured.NestedInt64(app.Object, "spec", "replicas"); n > 10 {
		return admission.Denied(fmt.Sprintf("spec.replicas: %d is over 10", n))
	}
	return admission.Allowed("")
}

// checkAddUser checks that envtest's AddUser gives a user its client
// certificate, authorized by RBAC: refused before any binding.
func checkAddUser(t *testing.T, env *envtest.Environment) {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "alice", Groups: []string{"devs"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(user.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace("suite"))
	const forbidden = `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "suite"`
	if !apierrors.IsForbidden(err) || err.Error() != forbidden {
		t.Errorf("alice's list: %v, want %s", err, forbidden)
	}
}

// runWebAppController runs a manager with the reconciler of WebApps
// until the test ends.
func runWebAppController(t *testing.T, env *envtest.Environment, cfg *rest.Config) {
	t.Helper()
	hooks := &env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: hooks.LocalServingHost, Port: hooks.LocalServingPort, CertDir: hooks.LocalServingCertDir})})
	if err != nil {
		t.Fatal(err)
	}
	mgr.GetWebhookServer().Register(webAppWebhookPath, &admission.Webhook{Handler: admission.HandlerFunc(validateWebApp)})
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(webAppGVK)
	err = ctrl.NewControllerManagedBy(mgr).For(app).Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ConfigMap{}).
		Complete(&webAppReconciler{Client: mgr.GetClient()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// webAppReconciler is a kubebuilder-style reconciler: it makes a WebApp's
// ConfigMap, Service and Deployment, owned by it, and reports it ready.
type webAppReconciler struct{ client.Client }

func (r *webAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(webAppGVK)
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	image, _, _ := unstructured.NestedString(app.Object, "spec", "image")
	replicas, _, _ := unstructured.NestedInt64(app.Object, "spec", "replicas")
	labels := map[string]string{"app": req.Name}
	meta := metav1.ObjectMeta{Name: req.Name, Namespace: req.Namespace}
	cm := &corev1.ConfigMap{ObjectMeta: meta}
	svc := &corev1.Service{ObjectMeta: meta}
	dep := &appsv1.Deployment{ObjectMeta: meta}
	mutate := map[client.Object]func(){
		cm: func() { cm.Data = map[string]string{"image": image} },
		svc: func() {
			svc.Spec.Selector = labels
			svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
		},
		dep: func() {
			n := int32(replicas)
			dep.Spec.Replicas = &n
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
			dep.Spec.Template.Labels = labels
			dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "web", Image: image}}
		},
	}
	for _, obj := range []client.Object{cm, svc, dep} {
		_, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
			mutate[obj]()
			return controllerutil.SetControllerReference(app, obj, r.Scheme())
		})
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("%T %s: %w", obj, req, err)
		}
	}
	if ready, _, _ := unstructured.NestedBool(app.Object, "status", "ready"); !ready {
		if err := unstructured.SetNestedField(app.Object, true, "status", "ready"); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.Status().Update(ctx, app)
	}
	return ctrl.Result{}, nil
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: did not happen (last error: %v)", what, last)
	}
}

// The garbage collector is one environment variable away: with it, a
// WebApp's dependents go with it, as on a cluster (without it they stay,
// as with kube-apiserver alone).
func TestEnvtestGarbageCollectorOnRequest(t *testing.T) {
	envtestAssets(t)
	t.Setenv("STRATA_CONTROLLERS", "garbage-collector-controller")
	_, cfg := startEnvtest(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "default"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", Namespace: "default",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}}}
	if err := c.Create(ctx, dependent); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the garbage collector deletes the dependent", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), err
	})
}

// BenchmarkEnvtestStartStop is envtest's Start (etcd, the API server, the
// admin user, no CRDs) and Stop on strata's assets, or on the assets
// $KUBEBUILDER_ASSETS names when it is set (kube-apiserver and etcd
// binaries, to compare).
func BenchmarkEnvtestStartStop(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		envtestAssets(b)
	}
	ctrl.SetLogger(logr.Discard())
	var starting, stopping time.Duration
	for b.Loop() {
		env := &envtest.Environment{}
		t0 := time.Now()
		if _, err := env.Start(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		starting += t1.Sub(t0)
		stopping += time.Since(t1)
	}
	b.ReportMetric(float64(starting.Microseconds())/1000/float64(b.N), "start-ms")
	b.ReportMetric(float64(stopping.Microseconds())/1000/float64(b.N), "stop-ms")
}
