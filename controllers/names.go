package controllers

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
)

// Names of the kube-controller-manager controllers strata runs, as
// --controllers spells them.
const (
	GarbageCollectorName    = names.GarbageCollectorController
	ResourceQuotaName       = names.ResourceQuotaController
	ServiceAccountName      = names.ServiceAccountController
	RootCAPublisherName     = names.RootCACertificatePublisherController
	RoleAggregationName     = names.ClusterRoleAggregationController
	allDefaultControllers   = "*"
	disabledControllerToken = "-"
)

// known is kube-controller-manager v1.37's list of controllers
// (cmd/kube-controller-manager/app/controller_descriptor.go,
// NewControllerDescriptors): each name with the aliases it keeps for old
// flags, and whether "*" leaves it off. The package cannot import that
// list: it lives with every controller's constructor (kubelet, volume and
// cloud code) in kube-controller-manager's app package.
var known = []struct {
	name    string
	aliases []string
	off     bool // disabled by default
}{
	{names.ServiceAccountTokenController, []string{"serviceaccount-token"}, false},
	{names.EndpointsController, []string{"endpoint"}, false},
	{names.EndpointSliceController, []string{"endpointslice"}, false},
	{names.EndpointSliceMirroringController, []string{"endpointslicemirroring"}, false},
	{names.ReplicationControllerController, []string{"replicationcontroller"}, false},
	{names.PodGarbageCollectorController, []string{"podgc"}, false},
	{names.ResourceQuotaController, []string{"resourcequota"}, false},
	{names.NamespaceController, []string{"namespace"}, false},
	{names.ServiceAccountController, []string{"serviceaccount"}, false},
	{names.GarbageCollectorController, []string{"garbagecollector"}, false},
	{names.DaemonSetController, []string{"daemonset"}, false},
	{names.JobController, []string{"job"}, false},
	{names.PodGroupProtectionController, nil, false},
	{names.DeploymentController, []string{"deployment"}, false},
	{names.ReplicaSetController, []string{"replicaset"}, false},
	{names.HorizontalPodAutoscalerController, []string{"horizontalpodautoscaling"}, false},
	{names.DisruptionController, []string{"disruption"}, false},
	{names.StatefulSetController, []string{"statefulset"}, false},
	{names.CronJobController, []string{"cronjob"}, false},
	{names.CertificateSigningRequestSigningController, []string{"csrsigning"}, false},
	{names.CertificateSigningRequestApprovingController, []string{"csrapproving"}, false},
	{names.CertificateSigningRequestCleanerController, []string{"csrcleaner"}, false},
	{names.PodCertificateRequestCleanerController, nil, false},
	{names.TTLController, []string{"ttl"}, false},
	{names.BootstrapSignerController, []string{"bootstrapsigner"}, true},
	{names.TokenCleanerController, []string{"tokencleaner"}, true},
	{names.NodeIpamController, []string{"nodeipam"}, false},
	{names.NodeLifecycleController, []string{"nodelifecycle"}, false},
	{names.PersistentVolumeBinderController, []string{"persistentvolume-binder"}, false},
	{names.PersistentVolumeAttachDetachController, []string{"attachdetach"}, false},
	{names.PersistentVolumeExpanderController, []string{"persistentvolume-expander"}, false},
	{names.ClusterRoleAggregationController, []string{"clusterrole-aggregation"}, false},
	{names.PersistentVolumeClaimProtectionController, []string{"pvc-protection"}, false},
	{names.PersistentVolumeProtectionController, []string{"pv-protection"}, false},
	{names.VolumeAttributesClassProtectionController, nil, false},
	{names.TTLAfterFinishedController, []string{"ttl-after-finished"}, false},
	{names.RootCACertificatePublisherController, []string{"root-ca-cert-publisher"}, false},
	{names.KubeAPIServerClusterTrustBundlePublisherController, nil, false},
	{names.EphemeralVolumeController, []string{"ephemeral-volume"}, false},
	{names.StorageVersionGarbageCollectorController, []string{"storage-version-gc"}, false},
	{names.ResourceClaimController, []string{"resource-claim-controller"}, false},
	{names.ResourcePoolStatusRequestController, nil, false},
	{names.DeviceTaintEvictionController, nil, false},
	{names.LegacyServiceAccountTokenCleanerController, []string{"legacy-service-account-token-cleaner"}, false},
	{names.ValidatingAdmissionPolicyStatusController, nil, false},
	{names.TaintEvictionController, nil, false},
	{names.ServiceCIDRController, nil, false},
	{names.StorageVersionMigratorController, []string{"svm"}, false},
	{names.SELinuxWarningController, nil, true},
}

// Supported are the controllers strata runs, in the order they start; every
// other name of known is accepted by --controllers and not run (the
// workload controllers that create Pods, the node, volume and endpoint
// controllers need nodes; the rest belong to features strata does not
// serve a controller for).
var Supported = []string{ServiceAccountName, RootCAPublisherName, RoleAggregationName, GarbageCollectorName, ResourceQuotaName}

// Selection is a parsed --controllers list: kube-controller-manager's
// syntax, where "*" enables the controllers on by default, "name"
// enables one and "-name" disables one; the first mention of a name
// decides, and names not mentioned follow "*" (off without it).
type Selection struct{ list []string }

// DefaultSelection is --controllers' default, "*".
var DefaultSelection = []string{allDefaultControllers}

// ParseSelection checks list as kube-controller-manager checks
// --controllers (aliases become canonical names) and reports every name
// it does not know, in its words.
func ParseSelection(list []string) (Selection, error) {
	var s Selection
	var unknown []string
	for _, item := range list {
		if item == allDefaultControllers {
			s.list = append(s.list, item)
			continue
		}
		bare := strings.TrimPrefix(item, disabledControllerToken)
		name, ok := canonical(bare)
		if !ok {
			unknown = append(unknown, fmt.Sprintf("%q is not in the list of known controllers", bare))
			continue
		}
		if bare != item {
			name = disabledControllerToken + name
		}
		s.list = append(s.list, name)
	}
	if len(unknown) > 0 {
		return Selection{}, fmt.Errorf("--controllers: %s", strings.Join(unknown, ", "))
	}
	return s, nil
}

// canonical is the name of a known controller or alias.
func canonical(name string) (string, bool) {
	for _, k := range known {
		if k.name == name || slices.Contains(k.aliases, name) {
			return k.name, true
		}
	}
	return "", false
}

// Enabled reports whether the selection runs the controller name (a
// canonical name), as kube-controller-manager's IsControllerEnabled
// decides it.
func (s Selection) Enabled(name string) bool {
	star := false
	for _, item := range s.list {
		switch item {
		case name:
			return true
		case disabledControllerToken + name:
			return false
		case allDefaultControllers:
			star = true
		}
	}
	if !star {
		return false
	}
	for _, k := range known {
		if k.name == name {
			return !k.off
		}
	}
	return false
}

// NotRun are the controllers the selection enables by name that strata
// does not run, for the server to say so.
func (s Selection) NotRun() []string {
	var out []string
	for _, item := range s.list {
		if item != allDefaultControllers && !strings.HasPrefix(item, disabledControllerToken) && !slices.Contains(Supported, item) {
			out = append(out, item)
		}
	}
	return out
}

// AllNames are kube-controller-manager's controller names, sorted, for
// the flag's help.
func AllNames() []string {
	var out []string
	for _, k := range known {
		out = append(out, k.name)
	}
	slices.Sort(out)
	return out
}
