// Package rbacmodel is what tests expect of authorization, computed
// independently of the server: upstream's bootstrap policy with the
// aggregated roles filled as the aggregation controller fills them,
// upstream's RBAC authorizer over it behind the system:masters
// authorizer (as kube-apiserver composes them), and the 403 message
// kube-apiserver's authorization filter writes for a refusal. Only tests
// import it.
package rbacmodel

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// Policy is a set of RBAC objects.
type Policy struct {
	Roles               []*rbacv1.Role
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// Bootstrap is upstream's bootstrap policy (bootstrappolicy's cluster,
// controller and namespaced roles and bindings), aggregated.
func Bootstrap() (*Policy, error) {
	p := &Policy{}
	for _, r := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		p.ClusterRoles = append(p.ClusterRoles, r.DeepCopy())
	}
	for _, b := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		p.ClusterRoleBindings = append(p.ClusterRoleBindings, b.DeepCopy())
	}
	for _, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			p.Roles = append(p.Roles, r.DeepCopy())
		}
	}
	for _, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			p.RoleBindings = append(p.RoleBindings, b.DeepCopy())
		}
	}
	return p, p.Aggregate()
}

// Aggregate fills the rules of aggregated cluster roles: the union of the
// rules of the roles their selectors match, repeated until nothing changes
// (edit is itself aggregated into admin).
func (p *Policy) Aggregate() error {
	for changed := true; changed; {
		changed = false
		for _, r := range p.ClusterRoles {
			if r.AggregationRule == nil {
				continue
			}
			seen := map[string]bool{}
			var rules []rbacv1.PolicyRule
			for _, sel := range r.AggregationRule.ClusterRoleSelectors {
				s, err := metav1.LabelSelectorAsSelector(&sel)
				if err != nil {
					return fmt.Errorf("clusterrole %s: aggregationRule: %w", r.Name, err)
				}
				for _, other := range p.ClusterRoles {
					if other.Name == r.Name || !s.Matches(labels.Set(other.Labels)) {
						continue
					}
					for _, rule := range other.Rules {
						if key := fmt.Sprint(rule); !seen[key] {
							seen[key] = true
							rules = append(rules, rule)
						}
					}
				}
			}
			if len(rules) != len(r.Rules) {
				r.Rules, changed = rules, true
			}
		}
	}
	return nil
}

// Resolver is upstream's rule resolver over the policy.
func (p *Policy) Resolver() (rbacvalidation.AuthorizationRuleResolver, *rbacvalidation.StaticRoles) {
	return rbacvalidation.NewTestRuleResolver(p.Roles, p.RoleBindings, p.ClusterRoles, p.ClusterRoleBindings)
}

// Authorizer is upstream's RBAC authorizer over the policy, behind the
// system:masters authorizer.
func (p *Policy) Authorizer() (authorizer.Authorizer, error) {
	_, static := p.Resolver()
	return union.New(
		union.NamedAuthorizer{AuthorizerName: "kubernetes.io/system-privileged-group",
			Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
		union.NamedAuthorizer{AuthorizerName: "rbac", Authorizer: rbac.New(static, static, static, static)})
}

// codecs write the expected 403s.
var codecs = serializer.NewCodecFactory(func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}())

// Forbidden is the message of kube-apiserver's 403 when a does not allow
// attrs (its authorization filter's responsewriters.Forbidden, with the
// authorizer's reason); "" when a allows it.
func Forbidden(a authorizer.Authorizer, attrs authorizer.AttributesRecord) (string, error) {
	decision, reason, _ := a.Authorize(context.Background(), attrs)
	if decision == authorizer.DecisionAllow {
		return "", nil
	}
	rec := httptest.NewRecorder()
	responsewriters.Forbidden(attrs, rec, httptest.NewRequest(http.MethodGet, "/", nil), reason, codecs)
	var st metav1.Status
	if err := runtime.DecodeInto(codecs.UniversalDecoder(), rec.Body.Bytes(), &st); err != nil {
		return "", fmt.Errorf("decoding the expected 403 %s: %w", rec.Body, err)
	}
	return st.Message, nil
}
