package server

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// mutated is what TestMutatingAdmissionPolicy checks of an object: its
// labels and one top-level field (data or spec).
type mutated struct {
	Labels map[string]string
	Field  any
}

func mutatedOf(obj *unstructured.Unstructured, field string) mutated {
	if obj == nil {
		return mutated{}
	}
	return mutated{Labels: obj.GetLabels(), Field: obj.Object[field]}
}

// TestMutatingAdmissionPolicy: a MutatingAdmissionPolicy (admissionregistration.k8s.io/v1)
// with a ConfigMap parameter applies an ApplyConfiguration and a JSONPatch
// mutation to the objects its binding matches, built-in and custom, on
// create: the answer and the stored object carry both.
func TestMutatingAdmissionPolicy(t *testing.T) {
	s := startPolicyServer(t)
	s.widgetsCRD(t)
	cases := []struct {
		name      string
		matched   schema.GroupVersionResource
		mutations []admissionregistrationv1.Mutation
		obj       *unstructured.Unstructured
		field     string
		want      mutated
	}{{
		name: "configmap", matched: configMaps,
		mutations: []admissionregistrationv1.Mutation{
			applyConfiguration(`Object{metadata: Object.metadata{labels: {"team": params.data.team}}}`),
			jsonPatch(`[JSONPatch{op: "add", path: "/data/added", value: "by-" + params.data.team}]`)},
		obj: configMap("configmap", "app", map[string]any{"a": "1"}), field: "data",
		want: mutated{Labels: map[string]string{"team": "blue"}, Field: map[string]any{"a": "1", "added": "by-blue"}},
	}, {
		name: "custom-resource", matched: widgetsV1,
		mutations: []admissionregistrationv1.Mutation{
			applyConfiguration(`Object{spec: Object.spec{color: params.data.team}}`),
			jsonPatch(`[JSONPatch{op: "replace", path: "/spec/size", value: object.spec.size * 2}]`)},
		obj: widget("custom-resource", "w", map[string]any{"size": int64(3)}), field: "spec",
		want: mutated{Field: map[string]any{"size": int64(6), "color": "blue"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.namespace(t, c.name)
			s.mustCreate(t, configMaps, configMap(c.name, "defaults", map[string]any{"team": "blue"}))
			s.mutatingPolicy(t, c.name, c.matched, c.mutations)
			var last mutated
			waitFor(t, "the policy to mutate a dry run", func() (bool, error) {
				got, o := s.create(t, c.matched, c.obj, true)
				last = mutatedOf(got, c.field)
				return o.Err == "" && reflect.DeepEqual(last, c.want), nil
			})
			created, o := s.create(t, c.matched, c.obj, false)
			diffOutcome(t, "create", outcome{}, o)
			stored, err := dynamicFor(t, s.admin).Resource(c.matched).Namespace(c.name).Get(t.Context(), c.obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for what, obj := range map[string]*unstructured.Unstructured{"created": created, "stored": stored} {
				if diff := cmp.Diff(c.want, mutatedOf(obj, c.field)); diff != "" {
					t.Errorf("%s object (-want +got):\n%s", what, diff)
				}
			}
		})
	}
}

func applyConfiguration(expression string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expression}}
}

func jsonPatch(expression string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: expression}}
}

// mutatingPolicy creates a policy and its binding, both named name, bound
// to the namespace name with the ConfigMap "defaults" there as parameter.
func (s *policyServer) mutatingPolicy(t *testing.T, name string, matched schema.GroupVersionResource, mutations []admissionregistrationv1.Mutation) {
	t.Helper()
	api := s.client.AdmissionregistrationV1()
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			ParamKind:          &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints:   &admissionregistrationv1.MatchResources{ResourceRules: createRule(matched)},
			Mutations:          mutations,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy}}
	if _, err := api.MutatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name,
			ParamRef: &admissionregistrationv1.ParamRef{Name: "defaults", Namespace: name,
				ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
			MatchResources: inNamespace(name)}}
	if _, err := api.MutatingAdmissionPolicyBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
