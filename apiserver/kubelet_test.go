package apiserver

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeletSubresources checks the answers to the subresources
// kube-apiserver serves through kubelets: upstream's own errors up to the
// connection (missing pod or node 404, unscheduled pod 400, bad container
// 400, invalid log options 422, logs of an unscheduled pod 204), then 503
// where kube-apiserver would connect to a kubelet, a pod or an endpoint.
func TestKubeletSubresources(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pods := ts.client.CoreV1().Pods("default")
	for _, name := range []string{"pending", "lost", "bound"} {
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, node := range map[string]string{"lost": "gone", "bound": "n1"} {
		if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const p = "/api/v1/namespaces/default/pods/"
	noHost := statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: "pod pending does not have a host assigned"}
	noKubelet := func(sub string) statusWant {
		return statusWant{code: 503, reason: metav1.StatusReasonServiceUnavailable, message: sub + " needs the kubelet of node n1: strata runs no kubelets"}
	}
	tests := []struct {
		method, path string
		want         statusWant // code 204: no body
	}{
		{"GET", p + "pending/log", statusWant{code: 204}},
		{"GET", p + "missing/log", statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `pods "missing" not found`}},
		{"GET", p + "pending/log?container=x", statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: "container x is not valid for pod pending"}},
		{"GET", p + "pending/log?tailLines=-1", statusWant{code: 422, reason: metav1.StatusReasonInvalid,
			message: `PodLogOptions "pending" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0`}},
		{"GET", p + "lost/log", statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `nodes "gone" not found`}},
		{"GET", p + "bound/log", noKubelet("pods/log")},
		{"POST", p + "pending/exec?command=ls", noHost},
		{"GET", p + "pending/attach", noHost},
		{"POST", p + "pending/portforward", noHost},
		{"POST", p + "bound/exec?command=ls&stdout=true", noKubelet("pods/exec")},
		{"POST", p + "missing/exec?command=ls", statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `pods "missing" not found`}},
		{"GET", p + "pending/proxy/healthz", statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: "address not allowed"}},
		{"GET", "/api/v1/nodes/n1/proxy/metrics", noKubelet("nodes/proxy")},
		{"GET", "/api/v1/nodes/gone/proxy", statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `nodes "gone" not found`}},
		{"GET", "/api/v1/namespaces/default/services/svc/proxy/", statusWant{code: 503, reason: metav1.StatusReasonServiceUnavailable,
			message: `no endpoints available for service "svc"`}},
		{"GET", "/api/v1/namespaces/default/services/svc:81/proxy/", statusWant{code: 503, reason: metav1.StatusReasonServiceUnavailable,
			message: `no service port 81 found for service "svc"`}},
		{"DELETE", p + "pending/log", statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed,
			message: "the server does not allow this method on the requested resource"}},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res := rawCall(t, ts, tc.method, tc.path, nil, nil)
			if tc.want.code == 204 {
				if res.code != 204 || len(res.body) != 0 {
					t.Errorf("%d %q, want 204 and no body", res.code, res.body)
				}
				return
			}
			var got metav1.Status
			if err := json.Unmarshal(res.body, &got); err != nil || int(got.Code) != res.code {
				t.Fatalf("%d %s: not a Status of its code (%v)", res.code, res.body, err)
			}
			checkStatus(t, got, tc.want)
		})
	}
	logs, err := pods.GetLogs("pending", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || len(logs) != 0 {
		t.Errorf("GetLogs of an unscheduled pod: %q, %v; want nothing", logs, err)
	}
}
