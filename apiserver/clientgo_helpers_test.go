package apiserver

// Helpers the package's tests share: raw HTTP requests and the Status they
// answer with, object builders, watch events, etcd revisions and
// compaction. The tests that drive the server with client-go's typed,
// dynamic and REST clients expect kube-apiserver v1.37's answers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/stratadev/strata/storage"
)

var (
	gvrConfigMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrClusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

// httpResult is the answer to a raw HTTP request.
type httpResult struct {
	code   int
	header http.Header
	body   []byte
}

var rawHTTPClient = &http.Client{Timeout: 30 * time.Second}

// rawCall sends one request to the test server over HTTP. A transport
// error (for example a dropped connection) fails the test.
func rawCall(t testing.TB, ts *testServer, method, path string, header map[string]string, body []byte) httpResult {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := rawHTTPClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return httpResult{code: resp.StatusCode, header: resp.Header, body: data}
}

// parseStatusBody decodes a body that must be a metav1.Status.
func parseStatusBody(t testing.TB, body []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("the answer is not a Status: %v\n%s", err, body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("the answer is not a Status (kind %q, apiVersion %q):\n%s", st.Kind, st.APIVersion, body)
	}
	return st
}

// statusWant is the expected part of a Status.
type statusWant struct {
	code    int32
	reason  metav1.StatusReason
	message string                // exact, when set
	prefix  string                // message prefix, when set
	details *metav1.StatusDetails // compared as a whole, when set
}

func checkStatus(t testing.TB, got metav1.Status, want statusWant) {
	t.Helper()
	if got.Status != metav1.StatusFailure {
		t.Errorf("status = %q, want %q", got.Status, metav1.StatusFailure)
	}
	if got.Code != want.code {
		t.Errorf("code = %d, want %d (message %q)", got.Code, want.code, got.Message)
	}
	if got.Reason != want.reason {
		t.Errorf("reason = %q, want %q (message %q)", got.Reason, want.reason, got.Message)
	}
	if want.message != "" && got.Message != want.message {
		t.Errorf("message:\n got: %s\nwant: %s", got.Message, want.message)
	}
	if want.prefix != "" && !strings.HasPrefix(got.Message, want.prefix) {
		t.Errorf("message:\n got: %s\nwant a message starting with: %s", got.Message, want.prefix)
	}
	if want.details != nil {
		if diff := cmp.Diff(want.details, got.Details); diff != "" {
			t.Errorf("details (-want +got):\n%s", diff)
		}
	}
}

// checkStatusErr checks a client error carrying a Status.
func checkStatusErr(t testing.TB, err error, want statusWant) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want a Status error with code %d", err, err, want.code)
	}
	checkStatus(t, se.ErrStatus, want)
}

// metaOf returns an object's metadata.
func metaOf(t testing.TB, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// listNames returns the names (namespace/name when namespaced) of a list's items in order.
func listNames(t testing.TB, list runtime.Object) []string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, it := range items {
		m := metaOf(t, it)
		names = append(names, m.GetName())
	}
	return names
}

func newConfigMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// newDeployment is a minimal valid Deployment with one container "web".
func newDeployment(name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

func mustCreateConfigMap(t testing.TB, cms typedcorev1.ConfigMapInterface, name string, data map[string]string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := newConfigMap(name, data)
	cm.Labels = labels
	out, err := cms.Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s: %v", name, err)
	}
	return out
}

func rvInt(t testing.TB, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// nextEvent reads one watch event or fails after the timeout.
func nextEvent(t testing.TB, w watch.Interface, timeout time.Duration) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended early")
		}
		return ev
	case <-time.After(timeout):
		t.Fatalf("no watch event within %v", timeout)
	}
	return watch.Event{}
}

// eventString is "TYPE name" for objects and "BOOKMARK" for bookmarks.
func eventString(t testing.TB, ev watch.Event) string {
	t.Helper()
	if ev.Type == watch.Bookmark {
		return string(ev.Type)
	}
	if st, ok := ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("%s %d %s", ev.Type, st.Code, st.Reason)
	}
	return fmt.Sprintf("%s %s", ev.Type, metaOf(t, ev.Object).GetName())
}

// etcdRevision is the current revision of the shared etcd.
func etcdRevision(t testing.TB) int64 {
	t.Helper()
	resp, err := testEtcd.Get(context.Background(), "strata-test-revision-probe")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// compactNow compacts the shared etcd at its current revision through the
// compact_rev_key protocol, so that every store learns of it.
func compactNow(t testing.TB) int64 {
	t.Helper()
	rev := etcdRevision(t)
	if err := storage.Compact(context.Background(), testEtcd, rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

// eventually retries check every 50ms until it returns "" or the timeout
// passes; then it fails with the last complaint.
func eventually(t testing.TB, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
