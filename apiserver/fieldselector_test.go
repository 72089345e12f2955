package apiserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// fieldSelectorCase is one kind's field selectors: two objects, a selector
// that picks want of them, and an unsupported selector with
// kube-apiserver's 400 message.
type fieldSelectorCase struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	objects    []string // JSON; "stub:" + JSON merges into the kind's upstream example
	selector   string
	want       []string
	bad        string
	badMessage string
}

var fieldSelectorCases = []fieldSelectorCase{
	{gvr: gvr("", "v1", "pods"), namespaced: true, objects: []string{
		`{"metadata":{"name":"a"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"nginx"}]}}`,
		`{"metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`},
		selector: "spec.nodeName=n1,status.phase=Pending", want: []string{"a"},
		bad: "spec.foo", badMessage: "field label not supported: spec.foo"},
	{gvr: gvr("", "v1", "events"), namespaced: true, objects: []string{
		`{"metadata":{"name":"a"},"involvedObject":{"kind":"Deployment","name":"web","namespace":"fs"},"reason":"ScalingReplicaSet","type":"Normal","source":{"component":"c"}}`,
		`{"metadata":{"name":"b"},"involvedObject":{"kind":"Pod","name":"web","namespace":"fs"},"reason":"Scheduled","type":"Normal","source":{"component":"c"}}`},
		selector: "involvedObject.name=web,involvedObject.kind=Deployment,source=c", want: []string{"a"},
		bad: "message", badMessage: "field label not supported: message"},
	{gvr: gvr("events.k8s.io", "v1", "events"), namespaced: true, objects: []string{
		`{"metadata":{"name":"c"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"c/x","reportingInstance":"i","action":"Scale","reason":"R","type":"Normal","regarding":{"kind":"Deployment","name":"web","namespace":"fs"}}`,
		`{"metadata":{"name":"d"},"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"c/x","reportingInstance":"i","action":"Scale","reason":"R","type":"Normal","regarding":{"kind":"Pod","name":"web","namespace":"fs"}}`},
		// Core and events.k8s.io Events are one: b is the core case's.
		selector: "regarding.kind=Pod", want: []string{"b", "d"},
		bad: "involvedObject.kind", badMessage: "field label not supported: involvedObject.kind"},
	{gvr: gvr("", "v1", "secrets"), namespaced: true, objects: []string{
		`{"metadata":{"name":"a"},"type":"example.com/t"}`, `{"metadata":{"name":"b"}}`},
		selector: "type=Opaque", want: []string{"b"},
		bad: "data.x", badMessage: "field label not supported: data.x"},
	{gvr: gvr("", "v1", "services"), namespaced: true, objects: []string{
		`{"metadata":{"name":"a"},"spec":{"type":"ExternalName","externalName":"example.com"}}`,
		`{"metadata":{"name":"b"},"spec":{"clusterIP":"None","clusterIPs":["None"],"ports":[{"port":80}]}}`},
		selector: "spec.type=ExternalName", want: []string{"a"},
		bad: "spec.ports", badMessage: "field label not supported: spec.ports"},
	{gvr: gvr("", "v1", "nodes"), objects: []string{
		`{"metadata":{"name":"fs-a"},"spec":{"unschedulable":true}}`, `{"metadata":{"name":"fs-b"}}`},
		selector: "spec.unschedulable=true", want: []string{"fs-a"},
		bad: "metadata.namespace", badMessage: "field label not supported: metadata.namespace"},
	{gvr: gvr("", "v1", "namespaces"), objects: []string{`{"metadata":{"name":"fs-a"}}`, `{"metadata":{"name":"fs-b"}}`},
		selector: "status.phase=Active,metadata.name=fs-b", want: []string{"fs-b"},
		bad: "spec.finalizers", badMessage: "field label not supported: spec.finalizers"},
	{gvr: gvr("", "v1", "replicationcontrollers"), namespaced: true, objects: []string{
		`{"metadata":{"name":"a"},"spec":{"selector":{"app":"a"},"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
		`{"metadata":{"name":"b"},"spec":{"selector":{"app":"b"},"template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`},
		selector: "status.replicas=0", want: []string{"a", "b"},
		bad: "spec.replicas", badMessage: "field label not supported: spec.replicas"},
	{gvr: gvr("batch", "v1", "jobs"), namespaced: true, objects: []string{
		`{"metadata":{"name":"a"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`},
		selector: "status.successful=0", want: []string{"a"},
		bad: "spec.parallelism", badMessage: `field label "spec.parallelism" not supported for Job`},
	{gvr: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), objects: []string{
		`stub:{"metadata":{"name":"fs-a"},"spec":{"signerName":"example.com/a"}}`,
		`stub:{"metadata":{"name":"fs-b"},"spec":{"signerName":"example.com/b"}}`},
		selector: "spec.signerName=example.com/b", want: []string{"fs-b"},
		bad: "spec.username", badMessage: "field label not supported: spec.username"},
	{gvr: gvr("certificates.k8s.io", "v1", "clustertrustbundles"), objects: []string{
		`stub:{"metadata":{"name":"example.com:a:x"},"spec":{"signerName":"example.com/a"}}`,
		`stub:{"metadata":{"name":"example.com:b:x"},"spec":{"signerName":"example.com/b"}}`},
		selector: "spec.signerName=example.com/a", want: []string{"example.com:a:x"},
		bad: "metadata.namespace", badMessage: "field label not supported: metadata.namespace"},
	{gvr: gvr("certificates.k8s.io", "v1", "podcertificaterequests"), namespaced: true, objects: []string{
		`stub:{"metadata":{"name":"a"},"spec":{"nodeName":"n1"}}`, `stub:{"metadata":{"name":"b"},"spec":{"nodeName":"n2"}}`},
		selector: "spec.nodeName=n2,spec.podName=pod-1", want: []string{"b"},
		bad: "spec.podUID", badMessage: "field label not supported: spec.podUID"},
	{gvr: gvr("resource.k8s.io", "v1", "resourceslices"), objects: []string{
		`stub:{"metadata":{"name":"fs-a"},"spec":{"nodeName":"n1","pool":{"name":"n1"}}}`,
		`stub:{"metadata":{"name":"fs-b"},"spec":{"nodeName":"n2","pool":{"name":"n2"}}}`},
		selector: "spec.nodeName=n1", want: []string{"fs-a"},
		bad: "spec.devices", badMessage: "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.devices"},
	{gvr: gvr("", "v1", "configmaps"), namespaced: true, objects: []string{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"b"}}`},
		selector: "metadata.name!=a", want: []string{"b"},
		bad: "data.x", badMessage: `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`},
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// TestFieldSelectors lists and watches every kind that has field selectors
// beyond metadata.name and metadata.namespace (and configmaps, which have
// not) with a supported selector and an unsupported one.
func TestFieldSelectors(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	if _, err := ts.dynamic.Resource(gvr("", "v1", "namespaces")).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "fs"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stubs := map[schema.GroupVersionResource]string{}
	for _, st := range readStorageStubs(t) {
		stubs[gvr(st.Group, st.Version, st.Resource)] = stubImages.Replace(st.Stub)
	}
	for _, tc := range fieldSelectorCases {
		t.Run(tc.gvr.GroupResource().String(), func(t *testing.T) {
			var client dynamic.ResourceInterface = ts.dynamic.Resource(tc.gvr)
			if tc.namespaced {
				client = ts.dynamic.Resource(tc.gvr).Namespace("fs")
			}
			for _, body := range tc.objects {
				obj := objectFor(t, body, stubs[tc.gvr])
				obj.SetAPIVersion(tc.gvr.GroupVersion().String())
				obj.SetKind(ts.api.current().resources[tc.gvr].kind.GVK.Kind)
				if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					t.Fatalf("create: %v", err)
				}
			}
			list, err := client.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := itemNames(list.Items); !slices.Equal(got, tc.want) {
				t.Errorf("list %s = %v, want %v", tc.selector, got, tc.want)
			}
			checkWatchSelects(t, client, tc.selector, list.GetResourceVersion(), tc.want)
			_, err = client.List(ctx, metav1.ListOptions{FieldSelector: tc.bad + "=x"})
			checkStatusErr(t, err, statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: tc.badMessage})
			_, err = client.Watch(ctx, metav1.ListOptions{FieldSelector: tc.bad + "=x"})
			checkStatusErr(t, err, statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: tc.badMessage})
		})
	}
}

// checkWatchSelects watches with the selector from resourceVersion 0 and
// expects the ADDED events of want, in order.
func checkWatchSelects(t *testing.T, client dynamic.ResourceInterface, selector, rv string, want []string) {
	t.Helper()
	w, err := client.Watch(context.Background(), metav1.ListOptions{FieldSelector: selector, ResourceVersion: "0"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	var got []string
	for len(got) < len(want) {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Added {
				got = append(got, ev.Object.(*unstructured.Unstructured).GetName())
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("watch %s: got %v, want %v", selector, got, want)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("watch %s = %v, want %v", selector, got, want)
	}
}

// objectFor builds a case's object: its JSON, or, after "stub:", its JSON
// merged over the kind's upstream example.
func objectFor(t *testing.T, body, stub string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if rest, ok := strings.CutPrefix(body, "stub:"); ok {
		if err := json.Unmarshal([]byte(stub), &obj.Object); err != nil {
			t.Fatal(err)
		}
		body = rest
	}
	var over map[string]any
	if err := json.Unmarshal([]byte(body), &over); err != nil {
		t.Fatal(err)
	}
	mergeInto(obj.Object, over)
	return obj
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if m, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				mergeInto(d, m)
				continue
			}
		}
		dst[k] = v
	}
}

func itemNames(items []unstructured.Unstructured) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.GetName())
	}
	slices.Sort(out)
	return out
}
