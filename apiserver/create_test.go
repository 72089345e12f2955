package apiserver

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClientGenerateName(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	seen := map[string]bool{}
	for range 3 {
		out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// kube-apiserver appends 5 random characters to generateName.
		if !strings.HasPrefix(out.Name, "gen-") || len(out.Name) != len("gen-")+5 || out.GenerateName != "gen-" {
			t.Errorf("name %q generateName %q, want gen- and 5 characters", out.Name, out.GenerateName)
		}
		if seen[out.Name] {
			t.Errorf("name %q generated twice", out.Name)
		}
		seen[out.Name] = true
		if _, err := cms.Get(ctx, out.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("get %s: %v", out.Name, err)
		}
	}
	// A name given with generateName wins.
	out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fixed", GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil || out.Name != "fixed" {
		t.Errorf("create with name and generateName: %v, name %q, want fixed", err, out.GetName())
	}
}
