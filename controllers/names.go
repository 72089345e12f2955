package controllers

import (
	"fmt"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	cmapp "k8s.io/controller-manager/app"
	cmconfig "k8s.io/controller-manager/config"
	cmoptions "k8s.io/controller-manager/options"
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
	PolicyStatusName        = names.ValidatingAdmissionPolicyStatusController
	PVCProtectionName       = names.PersistentVolumeClaimProtectionController
	PVProtectionName        = names.PersistentVolumeProtectionController
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
// workload controllers that create Pods, the node, endpoint and other volume
// controllers need nodes; the rest belong to features strata does not
// serve a controller for).
var Supported = []string{ServiceAccountName, RootCAPublisherName, RoleAggregationName, GarbageCollectorName, ResourceQuotaName,
	PolicyStatusName, PVCProtectionName, PVProtectionName}

// Selection is a parsed --controllers list: kube-controller-manager's
// syntax, where "*" enables the controllers on by default, "name"
// enables one and "-name" disables one; the first mention of a name
// decides, and names not mentioned follow "*" (off without it).
type Selection struct {
	list []string
	off  sets.String // kube-controller-manager's disabled by default
}

// DefaultSelection is --controllers' default, "*".
var DefaultSelection = []string{allDefaultControllers}

// ParseSelection checks list with kube-controller-manager's own check of
// --controllers (k8s.io/controller-manager/options), so that unknown names
// get its message, and turns aliases into canonical names as it does.
func ParseSelection(list []string) (Selection, error) {
	all, off := AllNames()
	aliases := map[string]string{}
	for _, k := range known {
		for _, a := range k.aliases {
			aliases[a] = k.name
		}
	}
	generic := cmoptions.GenericControllerManagerConfigurationOptions{
		GenericControllerManagerConfiguration: &cmconfig.GenericControllerManagerConfiguration{Controllers: list},
		Debugging:                             cmoptions.RecommendedDebuggingOptions(),
	}
	if err := utilerrors.NewAggregate(generic.Validate(all, off, aliases)); err != nil {
		return Selection{}, fmt.Errorf("--controllers: %w", err)
	}
	s := Selection{off: sets.NewString(off...)}
	for _, item := range list {
		bare := strings.TrimPrefix(item, disabledControllerToken)
		if name, ok := aliases[bare]; ok {
			item = strings.TrimSuffix(item, bare) + name
		}
		s.list = append(s.list, item)
	}
	return s, nil
}

// Enabled reports whether the selection runs the controller name (a
// canonical name), with kube-controller-manager's IsControllerEnabled.
func (s Selection) Enabled(name string) bool {
	return cmapp.IsControllerEnabled(name, s.off, s.list)
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

// AllNames are kube-controller-manager's controller names, sorted, and
// those "*" leaves off, for the flag's help.
func AllNames() (all, off []string) {
	for _, k := range known {
		all = append(all, k.name)
		if k.off {
			off = append(off, k.name)
		}
	}
	slices.Sort(all)
	slices.Sort(off)
	return all, off
}
