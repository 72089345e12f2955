package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// vapCase is a ValidatingAdmissionPolicy and its binding, both named
// name, bound to the namespace name, and the creates it answers.
type vapCase struct {
	name             string
	matched          schema.GroupVersionResource // the policy's one resource rule
	validations      []admissionregistrationv1.Validation
	auditAnnotations []admissionregistrationv1.AuditAnnotation
	matchConditions  []admissionregistrationv1.MatchCondition
	paramKind        *admissionregistrationv1.ParamKind
	paramRef         *admissionregistrationv1.ParamRef
	actions          []admissionregistrationv1.ValidationAction
	params           []*unstructured.Unstructured // ConfigMaps created first
	creates          []policyCreate
}

type policyCreate struct {
	gvr  schema.GroupVersionResource
	obj  *unstructured.Unstructured
	want outcome
}

const validationFailure = "validation.policy.admission.k8s.io/validation_failure"

// TestValidatingAdmissionPolicy: ValidatingAdmissionPolicies deny with
// kube-apiserver's messages (message, messageExpression, reason), warn
// (Warning header), audit (annotations in the audit log), read parameters
// from a ConfigMap, skip objects their matchConditions exclude, and apply
// to custom resources, also through another version of the CRD
// (matchPolicy Equivalent, the default).
func TestValidatingAdmissionPolicy(t *testing.T) {
	s := startPolicyServer(t)
	s.widgetsCRD(t)
	atMostOne := []admissionregistrationv1.Validation{{Expression: "size(object.data) <= 1", Message: "too many keys"}}
	tooBig := []admissionregistrationv1.Validation{{Expression: "object.spec.size < 10", Message: "too big"}}
	two := map[string]any{"a": "1", "b": "2"}
	deny := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	widgetsV2 := schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}
	cases := []vapCase{{
		name: "deny", matched: configMaps, validations: atMostOne, actions: deny,
		creates: []policyCreate{
			{configMaps, configMap("deny", "two", two), outcome{Code: 422,
				Err: `configmaps "two" is forbidden: ValidatingAdmissionPolicy 'deny' with binding 'deny' denied request: too many keys`}},
			{configMaps, configMap("deny", "one", map[string]any{"a": "1"}), outcome{}},
		},
	}, {
		name: "message-expression", matched: configMaps, actions: deny,
		validations: []admissionregistrationv1.Validation{{Expression: "size(object.data) <= 1", Reason: ptr.To(metav1.StatusReasonForbidden),
			MessageExpression: "'configmap ' + object.metadata.name + ' has ' + string(size(object.data)) + ' keys'"}},
		creates: []policyCreate{{configMaps, configMap("message-expression", "two", two), outcome{Code: 403,
			Err: `configmaps "two" is forbidden: ValidatingAdmissionPolicy 'message-expression' with binding 'message-expression' denied request: configmap two has 2 keys`}}},
	}, {
		name: "warn", matched: configMaps, validations: atMostOne,
		actions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn},
		creates: []policyCreate{{configMaps, configMap("warn", "two", two), outcome{
			Warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'warn' with binding 'warn': too many keys"}}}},
	}, {
		name: "audit", matched: configMaps, validations: atMostOne,
		actions:          []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit},
		auditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "keys", ValueExpression: "string(size(object.data))"}},
		creates: []policyCreate{{configMaps, configMap("audit", "two", two), outcome{Annotations: map[string]string{
			"audit/keys":      "2",
			validationFailure: `[{"message":"too many keys","policy":"audit","binding":"audit","expressionIndex":0,"validationActions":["Audit"]}]`}}}},
	}, {
		name: "params", matched: configMaps, actions: deny,
		paramKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
		paramRef: &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "params",
			ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
		params: []*unstructured.Unstructured{configMap("params", "limits", map[string]any{"maxKeys": "1"})},
		validations: []admissionregistrationv1.Validation{{Expression: "size(object.data) <= int(params.data.maxKeys)",
			MessageExpression: "'at most ' + params.data.maxKeys + ' keys'"}},
		creates: []policyCreate{{configMaps, configMap("params", "two", two), outcome{Code: 422,
			Err: `configmaps "two" is forbidden: ValidatingAdmissionPolicy 'params' with binding 'params' denied request: at most 1 keys`}}},
	}, {
		name: "match-conditions", matched: configMaps, validations: atMostOne, actions: deny,
		matchConditions: []admissionregistrationv1.MatchCondition{{Name: "checked", Expression: "object.metadata.name.startsWith('checked-')"}},
		creates: []policyCreate{
			{configMaps, configMap("match-conditions", "checked-two", two), outcome{Code: 422,
				Err: `configmaps "checked-two" is forbidden: ValidatingAdmissionPolicy 'match-conditions' with binding 'match-conditions' denied request: too many keys`}},
			{configMaps, configMap("match-conditions", "unchecked-two", two), outcome{}},
		},
	}, {
		name: "custom-resource", matched: widgetsV1, validations: tooBig, actions: deny,
		creates: []policyCreate{
			{widgetsV1, widget("custom-resource", "big", map[string]any{"size": int64(12)}), outcome{Code: 422,
				Err: `widgets.example.com "big" is forbidden: ValidatingAdmissionPolicy 'custom-resource' with binding 'custom-resource' denied request: too big`}},
			{widgetsV1, widget("custom-resource", "small", map[string]any{"size": int64(3)}), outcome{}},
		},
	}, {
		// The rule names v2; the widget is created in v1.
		name: "equivalent-version", matched: widgetsV2, validations: tooBig, actions: deny,
		creates: []policyCreate{{widgetsV1, widget("equivalent-version", "big", map[string]any{"size": int64(12)}), outcome{Code: 422,
			Err: `widgets.example.com "big" is forbidden: ValidatingAdmissionPolicy 'equivalent-version' with binding 'equivalent-version' denied request: too big`}}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.namespace(t, c.name)
			for _, p := range c.params {
				s.mustCreate(t, configMaps, p)
			}
			s.validatingPolicy(t, c)
			for _, cr := range c.creates {
				got := s.createWhenActive(t, cr.gvr, cr.obj, cr.want, c.name+"/", validationFailure)
				diffOutcome(t, cr.obj.GetName(), cr.want, got)
			}
		})
	}
}

// validatingPolicy creates c's policy and its binding.
func (s *policyServer) validatingPolicy(t *testing.T, c vapCase) {
	t.Helper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: c.name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: c.paramKind,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: createRule(c.matched)},
			Validations:      c.validations, AuditAnnotations: c.auditAnnotations, MatchConditions: c.matchConditions}}
	api := s.client.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: c.name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: c.name, ParamRef: c.paramRef,
			ValidationActions: c.actions, MatchResources: inNamespace(c.name)}}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createRule(gvr schema.GroupVersionResource) []admissionregistrationv1.NamedRuleWithOperations {
	return []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{gvr.Group}, APIVersions: []string{gvr.Version},
			Resources: []string{gvr.Resource}}}}}
}

// inNamespace binds a policy to the objects of one namespace.
func inNamespace(name string) *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"kubernetes.io/metadata.name": name}}}
}

// TestValidatingAdmissionPolicyTypeChecking: the
// validatingadmissionpolicy-status-controller writes the type errors of a
// policy's expressions, checked against the kinds it matches (built-in
// and custom), to status.typeChecking.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	s := startPolicyServer(t)
	s.widgetsCRD(t)
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cases := []struct {
		name        string
		matched     schema.GroupVersionResource
		validations []admissionregistrationv1.Validation
		want        []admissionregistrationv1.ExpressionWarning
	}{{
		name: "deployments", matched: deployments,
		validations: []admissionregistrationv1.Validation{
			{Expression: "object.spec.replicas > 1"},
			{Expression: "object.spec.nosuchfield == 1", MessageExpression: "'replicas: ' + string(object.spec.replicas)"}},
		want: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[1].expression",
			Warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'nosuchfield'\n | object.spec.nosuchfield == 1\n | ...........^\n"}},
	}, {
		name: "widgets", matched: widgetsV1,
		validations: []admissionregistrationv1.Validation{
			{Expression: "object.spec.size < 10"},
			{Expression: "object.spec.colour == 'red'"}},
		want: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[1].expression",
			Warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'\n | object.spec.colour == 'red'\n | ...........^\n"}},
	}}
	api := s.client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: c.name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: c.validations,
					MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: createRule(c.matched)}}}
			if _, err := api.Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var got *admissionregistrationv1.ValidatingAdmissionPolicy
			waitFor(t, "the policy's type checking", func() (bool, error) {
				var err error
				got, err = api.Get(t.Context(), c.name, metav1.GetOptions{})
				return err == nil && got.Status.ObservedGeneration == got.Generation, err
			})
			want := admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 1,
				TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: c.want}}
			if diff := cmp.Diff(want, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
