package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClientDeleteCollection(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	for i, team := range []string{"a", "b", "a", "c", "a"} {
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%d", i), nil, map[string]string{"team": team})
	}
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("kube-system"), "elsewhere", nil, map[string]string{"team": "a"})

	// The raw answer is the list of deleted objects.
	var code int
	raw, err := ts.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("configmaps").
		Param("labelSelector", "team=a").Do(ctx).StatusCode(&code).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var answer corev1.ConfigMapList
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	if code != 200 || answer.Kind != "ConfigMapList" || answer.APIVersion != "v1" {
		t.Errorf("answer: code %d kind %q apiVersion %q, want 200 ConfigMapList v1", code, answer.Kind, answer.APIVersion)
	}
	if diff := cmp.Diff([]string{"cm-0", "cm-2", "cm-4"}, listNames(t, &answer)); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cm-1", "cm-3"}, listNames(t, list)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	if _, err := ts.client.CoreV1().ConfigMaps("kube-system").Get(ctx, "elsewhere", metav1.GetOptions{}); err != nil {
		t.Errorf("another namespace's object: %v", err)
	}
	// With a field selector, through the typed client.
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name=cm-3"}); err != nil {
		t.Fatal(err)
	}
	list, err = cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cm-1"}, listNames(t, list)); diff != "" {
		t.Errorf("left after the field selector (-want +got):\n%s", diff)
	}
}
