package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestValidated checks that the write floors run upstream's ConfigMap
// strategy and validation: what kube-apiserver refuses, they refuse with
// its field paths, and what it stores they encode as v1.
func TestValidated(t *testing.T) {
	cm := func(name string, immutable bool, data map[string]string) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, ResourceVersion: "7"}, Data: data}
		if immutable {
			c.Immutable = &immutable
		}
		return c
	}
	tests := []struct {
		name    string
		obj     *corev1.ConfigMap
		old     runtime.Object // nil: a create
		wantErr string         // "": stored
	}{
		{"create", cm("a", false, map[string]string{"k": "v"}), nil, ""},
		{"create with an invalid key", cm("a", false, map[string]string{"bad key": "v"}), nil,
			`ConfigMap "a" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters`},
		{"create with an invalid name", cm("A_b", false, nil), nil, `ConfigMap "A_b" is invalid: metadata.name: Invalid value: "A_b"`},
		{"update", cm("a", false, map[string]string{"k": "w"}), cm("a", false, map[string]string{"k": "v"}), ""},
		{"update of an immutable ConfigMap's data", cm("a", true, map[string]string{"k": "w"}), cm("a", true, map[string]string{"k": "v"}),
			`ConfigMap "a" is invalid: data: Forbidden: field is immutable when ` + "`immutable`" + ` is set`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := validated(context.Background(), namespace, tc.obj, tc.old)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got corev1.ConfigMap
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.obj.Name || got.Data["k"] != tc.obj.Data["k"] || got.Namespace != namespace {
				t.Errorf("stored %s, want %s's name, namespace and data", out, tc.obj.Name)
			}
			if tc.old == nil && got.UID == "" {
				t.Errorf("created %s without the uid rest.BeforeCreate sets", out)
			}
		})
	}
}
