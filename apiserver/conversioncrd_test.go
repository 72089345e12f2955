package apiserver

import (
	"context"
	"net/http"
	"os"
	"regexp"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestConversionCRDValidation: apiextensions-apiserver's validation of a
// CRD's conversion settings applies, with its 422 and words
// (testdata/conversion/invalid-crds.yaml).
func TestConversionCRDValidation(t *testing.T) {
	data, err := os.ReadFile("testdata/conversion/invalid-crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name    string         `json:"name"`
		CRD     map[string]any `json:"crd"`
		Message string         `json:"message"`
	}
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			_, err := ts.dynamic.Resource(gvrCRDs).Create(context.Background(), &unstructured.Unstructured{Object: c.CRD}, metav1.CreateOptions{})
			wantStatus(t, "create", err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, regexp.QuoteMeta(c.Message))
		})
	}
}
