// Package controllers runs the controllers kube-apiserver and
// kube-controller-manager run for the objects strata serves, as upstream
// writes them, over the server's shared loopback client and informers
// (package server's shared): each is a small constructor that registers
// the informers it needs (before they start) and a start that runs it
// until its context ends.
//
//   - rbac.go: the bootstrap policy (kube-apiserver's post-start hook) and
//     the cluster-role aggregation controller;
//   - serviceaccounts.go: the default ServiceAccount and kube-root-ca.crt
//     of every namespace (kube-controller-manager's serviceaccount and
//     root-ca-certificate-publisher controllers);
//   - policystatus.go: the type checking of ValidatingAdmissionPolicies,
//     written to their status (kube-controller-manager's
//     validatingadmissionpolicy-status-controller);
//   - garbagecollector.go: kube-controller-manager's garbage collector
//     (ownerReferences; background, foreground and orphan deletion) on
//     metadata informers, resynced with discovery every 30 s;
//   - leader.go: RunAsLeader, so that among servers sharing one etcd the
//     kube-controller-manager controllers run on one at a time (a Lease,
//     with kube-controller-manager's timing).
package controllers
