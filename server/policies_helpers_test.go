package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgetsV1  = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// policyServer is a server whose audit log records every request at the
// Metadata level (with the admission annotations), and its clients.
type policyServer struct {
	admin    *rest.Config
	client   kubernetes.Interface
	crds     apiextensionsclient.Interface
	auditLog string
}

const metadataAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

func startPolicyServer(t *testing.T) *policyServer {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(metadataAuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &policyServer{auditLog: filepath.Join(dir, "audit.log")}
	s.admin = startTestServer(t, nil, func(o *Options) {
		o.Audit.PolicyFile, o.Audit.LogPath = policy, s.auditLog
	}).admin
	s.client = kubernetes.NewForConfigOrDie(s.admin)
	s.crds = apiextensionsclient.NewForConfigOrDie(s.admin)
	return s
}

// outcome is what a create answers: the error and its HTTP code, the
// Warning headers, and the admission annotations of its audit event.
type outcome struct {
	Err         string
	Code        int32
	Warnings    []string
	Annotations map[string]string
}

// create creates obj as the admin and returns the outcome without the
// annotations (annotations reads them).
func (s *policyServer) create(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, outcome) {
	t.Helper()
	rec := &warningRecorder{}
	cfg := rest.CopyConfig(s.admin)
	cfg.WarningHandler = rec
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(obj.GetNamespace()).
		Create(t.Context(), obj.DeepCopy(), opts)
	var o outcome
	if err != nil {
		o.Err = err.Error()
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			o.Code = status.Status().Code
		}
	}
	o.Warnings = rec.list
	return got, o
}

// createWhenActive creates obj once a dry run of it answers want (the
// policies' informers have seen what the test created) and returns the
// outcome of the real create. When want has annotations,
// the outcomes have those of the request's audit event whose keys start
// with one of prefixes.
func (s *policyServer) createWhenActive(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, want outcome, prefixes ...string) outcome {
	t.Helper()
	var last outcome
	waitFor(t, "the policy to act on "+obj.GetName(), func() (bool, error) {
		_, last = s.create(t, gvr, obj, true)
		if want.Annotations != nil {
			last.Annotations = annotations(s.event(t, gvr, obj, true), prefixes)
		}
		return reflect.DeepEqual(last, want), nil
	})
	_, o := s.create(t, gvr, obj, false)
	if want.Annotations != nil {
		var e *auditv1.Event
		waitFor(t, "the audit event of "+obj.GetName(), func() (bool, error) {
			e = s.event(t, gvr, obj, false)
			return e != nil, nil
		})
		o.Annotations = annotations(e, prefixes)
	}
	return o
}

// annotations are e's annotations with one of prefixes; nil without e.
func annotations(e *auditv1.Event, prefixes []string) map[string]string {
	if e == nil {
		return nil
	}
	got := map[string]string{}
	for k, v := range e.Annotations {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				got[k] = v
			}
		}
	}
	return got
}

// event is the last audit event of a create of obj (a dry run or not).
func (s *policyServer) event(t *testing.T, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, dryRun bool) *auditv1.Event {
	t.Helper()
	f, err := os.Open(s.auditLog)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var last *auditv1.Event
	for sc.Scan() {
		e := &auditv1.Event{}
		if err := json.Unmarshal(sc.Bytes(), e); err != nil {
			t.Fatalf("audit log line %q: %v", sc.Text(), err)
		}
		r := e.ObjectRef
		if e.Verb == "create" && e.Stage == auditv1.StageResponseComplete && r != nil && r.Resource == gvr.Resource &&
			r.Namespace == obj.GetNamespace() && r.Name == obj.GetName() && strings.Contains(e.RequestURI, "dryRun") == dryRun {
			last = e
		}
	}
	return last
}

// warningRecorder keeps the Warning headers a client receives.
type warningRecorder struct {
	mu   sync.Mutex
	list []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns the warnings received since the last call.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.list
	w.list = nil
	return list
}

// namespace creates a namespace named name.
func (s *policyServer) namespace(t *testing.T, name string) {
	t.Helper()
	s.mustCreate(t, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, object("v1", "Namespace", "", name, nil))
}

func (s *policyServer) mustCreate(t *testing.T, gvr schema.GroupVersionResource, objs ...*unstructured.Unstructured) {
	t.Helper()
	c := dynamicFor(t, s.admin)
	for _, obj := range objs {
		if _, err := c.Resource(gvr).Namespace(obj.GetNamespace()).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s/%s: %v", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
		}
	}
}

// widgetsCRD serves example.com Widgets (spec.size an integer, spec.color
// a string) in v1 (stored) and v2 (conversion None) and waits until they
// are established.
func (s *policyServer) widgetsCRD(t *testing.T) {
	t.Helper()
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"size": {Type: "integer"}, "color": {Type: "string"}}}}}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Schema: schema}},
		},
	}
	if _, err := s.crds.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the CRD to be established", func() (bool, error) {
		c, err := s.crds.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return established(c), nil
	})
}

func widget(namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return object("example.com/v1", "Widget", namespace, name, map[string]any{"spec": spec})
}

func configMap(namespace, name string, data map[string]any) *unstructured.Unstructured {
	return object("v1", "ConfigMap", namespace, name, map[string]any{"data": data})
}

func diffOutcome(t *testing.T, what string, want, got outcome) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}
