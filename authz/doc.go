// Package authz decides what a user may do: kube-apiserver's authorizer,
// built from the same modes (--authorization-mode) by the same upstream
// code (k8s.io/kubernetes/pkg/kubeapiserver/authorizer). Members of
// system:masters are allowed everything first; then each mode is asked in
// turn and the first that allows or denies decides (the union
// authorizer). RBAC reads Roles, ClusterRoles and their bindings through
// the listers of a shared informer factory, so a decision reads memory
// only.
//
// The Authorizer also lists a user's rules (authorizer.RuleResolver, for
// SelfSubjectRulesReview), as the union of the modes' rule resolvers.
package authz
