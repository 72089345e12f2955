// Package controllers runs, in process, the controllers kube-apiserver
// and kube-controller-manager run for the objects strata serves, as
// upstream writes them, over the server's loopback client and shared
// informers (package server's shared).
//
//   - rbac.go: the bootstrap policy (kube-apiserver's post-start hook, on
//     every server) and kube-controller-manager's
//     clusterrole-aggregation-controller;
//   - serviceaccounts.go: the default ServiceAccount and kube-root-ca.crt
//     of every namespace (serviceaccount-controller,
//     root-ca-certificate-publisher-controller);
//   - garbagecollector.go: the garbage-collector-controller
//     (ownerReferences; background, foreground and orphan deletion);
//   - resourcequota.go: the resourcequota-controller (ResourceQuotas'
//     status.used);
//   - policystatus.go: the validatingadmissionpolicy-status-controller
//     (type checking of ValidatingAdmissionPolicies, written to their
//     status);
//   - names.go: --controllers, kube-controller-manager's names and syntax;
//   - run.go: Run, one leadership term of the selected controllers;
//   - leader.go: RunAsLeader, so that among servers sharing one etcd the
//     kube-controller-manager controllers run on one at a time (a Lease,
//     with kube-controller-manager's timing).
package controllers
