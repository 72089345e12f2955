package registry

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/kube-aggregator/pkg/registry/apiservice"
	"k8s.io/utils/clock"

	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicy"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingadmissionpolicybinding"
	"k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
	"k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/certificates/certificates"
	"k8s.io/kubernetes/pkg/registry/certificates/clustertrustbundle"
	"k8s.io/kubernetes/pkg/registry/certificates/podcertificaterequest"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/flowschema"
	"k8s.io/kubernetes/pkg/registry/flowcontrol/prioritylevelconfiguration"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	"k8s.io/kubernetes/pkg/registry/networking/ipaddress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/networking/servicecidr"
	"k8s.io/kubernetes/pkg/registry/node/runtimeclass"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/devicetaintrule"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
	"k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
	"k8s.io/kubernetes/pkg/registry/storage/csidriver"
	"k8s.io/kubernetes/pkg/registry/storage/csinode"
	"k8s.io/kubernetes/pkg/registry/storage/csistoragecapacity"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattachment"
	"k8s.io/kubernetes/pkg/registry/storage/volumeattributesclass"
	"k8s.io/kubernetes/pkg/registry/storagemigration/storagemigration"
)

var (
	core           = schema.GroupVersion{Version: "v1"}
	admission      = schema.GroupVersion{Group: "admissionregistration.k8s.io", Version: "v1"}
	apiregv1       = schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}
	apps           = schema.GroupVersion{Group: "apps", Version: "v1"}
	autoscalingGV1 = schema.GroupVersion{Group: "autoscaling", Version: "v1"}
	autoscalingv2  = schema.GroupVersion{Group: "autoscaling", Version: "v2"}
	batch          = schema.GroupVersion{Group: "batch", Version: "v1"}
	certs          = schema.GroupVersion{Group: "certificates.k8s.io", Version: "v1"}
	coordination   = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	discovery      = schema.GroupVersion{Group: "discovery.k8s.io", Version: "v1"}
	events         = schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}
	flowcontrol    = schema.GroupVersion{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}
	networking     = schema.GroupVersion{Group: "networking.k8s.io", Version: "v1"}
	nodegv         = schema.GroupVersion{Group: "node.k8s.io", Version: "v1"}
	policy         = schema.GroupVersion{Group: "policy", Version: "v1"}
	rbac           = schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}
	resourcegv     = schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}
	scheduling     = schema.GroupVersion{Group: "scheduling.k8s.io", Version: "v1"}
	storagegv      = schema.GroupVersion{Group: "storage.k8s.io", Version: "v1"}
	svm            = schema.GroupVersion{Group: "storagemigration.k8s.io", Version: "v1"}
	ext            = schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}
)

var (
	all           = []string{"all"}
	apiExtensions = []string{"api-extensions"}
)

// Strategies that take arguments. They are given no authorizer (the
// server's is known only later; see escalation.go for the RBAC kinds'):
// the admission policies' paramKind checks and resource claims'
// admin-access checks are skipped as upstream skips them without an
// authorizer, and a PodCertificateRequest's signer check is allowed.
var (
	vapStrategy = validatingadmissionpolicy.NewStrategy(nil, nil)
	pcrStrategy = podcertificaterequest.NewStrategy()
	rcStrategy  = resourceclaim.NewStrategy(noNamespaces{}, nil)
)

// builtin is the table of built-in kinds: every resource kube-apiserver
// v1.37 serves with its default flags (see testdata/api-resources.txt),
// in its preferred version (and autoscaling/v1 HorizontalPodAutoscalers), except the authentication.k8s.io and
// authorization.k8s.io reviews (reviews.go).
// Short names, categories and verbs are those of kube-apiserver's REST
// storage for each resource (k8s.io/kubernetes/pkg/registry/<group>/<resource>/storage).
var builtin = []Kind{
	// core
	{GVK: core.WithKind("Namespace"), Resource: "namespaces", ShortNames: []string{"ns"},
		verbs:    []string{"create", "delete", "get", "list", "patch", "update", "watch"},
		strategy: namespace.Strategy, status: namespace.StatusStrategy, more: namespaceSubresources,
		attrs: namespace.GetAttrs, namespace: true},
	// bindings are not stored: a create assigns the named pod to a node
	// (BindPod), as pods/binding does.
	{GVK: core.WithKind("Binding"), Resource: "bindings", Namespaced: true, verbs: []string{"create"}, bindsPods: true},
	// componentstatuses are not stored: probed (componentstatus.go).
	{GVK: core.WithKind("ComponentStatus"), Resource: "componentstatuses", ShortNames: []string{"cs"},
		verbs: []string{"get", "list"}, probed: true},
	{GVK: core.WithKind("ConfigMap"), Resource: "configmaps", Namespaced: true, ShortNames: []string{"cm"},
		strategy: configmap.Strategy,
		attrs:    configmap.GetAttrs},
	{GVK: core.WithKind("Endpoints"), Resource: "endpoints", Namespaced: true, ShortNames: []string{"ep"},
		strategy: endpoint.Strategy},
	{GVK: core.WithKind("Event"), Resource: "events", Namespaced: true, ShortNames: []string{"ev"},
		strategy: event.Strategy,
		attrs:    event.GetAttrs},
	{GVK: core.WithKind("LimitRange"), Resource: "limitranges", Namespaced: true, ShortNames: []string{"limits"},
		strategy: limitrange.Strategy, defaultTable: true},
	{GVK: core.WithKind("Node"), Resource: "nodes", ShortNames: []string{"no"},
		strategy: node.Strategy, status: node.StatusStrategy, more: nodeSubresources,
		attrs: node.GetAttrs},
	{GVK: core.WithKind("PersistentVolume"), Resource: "persistentvolumes", ShortNames: []string{"pv"},
		strategy: persistentvolume.Strategy, status: persistentvolume.StatusStrategy,
		attrs: persistentvolume.GetAttrs},
	{GVK: core.WithKind("PersistentVolumeClaim"), Resource: "persistentvolumeclaims", Namespaced: true, ShortNames: []string{"pvc"},
		strategy: persistentvolumeclaim.Strategy, status: persistentvolumeclaim.StatusStrategy,
		attrs: persistentvolumeclaim.GetAttrs},
	{GVK: core.WithKind("Pod"), Resource: "pods", Namespaced: true, ShortNames: []string{"po"}, Categories: all,
		strategy: pod.Strategy, status: pod.StatusStrategy, binding: true, more: podSubresources,
		attrs: pod.GetAttrs},
	{GVK: core.WithKind("PodTemplate"), Resource: "podtemplates", Namespaced: true, strategy: podtemplate.Strategy},
	{GVK: core.WithKind("ReplicationController"), Resource: "replicationcontrollers", Namespaced: true, ShortNames: []string{"rc"},
		Categories: all, strategy: replicationcontroller.Strategy, status: replicationcontroller.StatusStrategy,
		scale: mapSelectorOf,
		attrs: replicationcontroller.GetAttrs},
	{GVK: core.WithKind("ResourceQuota"), Resource: "resourcequotas", Namespaced: true, ShortNames: []string{"quota"},
		strategy: resourcequota.Strategy, status: resourcequota.StatusStrategy},
	{GVK: core.WithKind("Secret"), Resource: "secrets", Namespaced: true, strategy: secret.Strategy,
		attrs: secret.GetAttrs},
	{GVK: core.WithKind("Service"), Resource: "services", Namespaced: true, ShortNames: []string{"svc"}, Categories: all,
		strategy: service.Strategy, status: service.StatusStrategy, more: serviceSubresources,
		attrs: service.GetAttrs, serviceAddresses: true},
	{GVK: core.WithKind("ServiceAccount"), Resource: "serviceaccounts", Namespaced: true, ShortNames: []string{"sa"},
		strategy: serviceaccount.Strategy, more: serviceAccountSubresources},

	// admissionregistration.k8s.io
	{GVK: admission.WithKind("MutatingWebhookConfiguration"), Resource: "mutatingwebhookconfigurations",
		Categories: apiExtensions, strategy: mutatingwebhookconfiguration.Strategy},
	{GVK: admission.WithKind("ValidatingWebhookConfiguration"), Resource: "validatingwebhookconfigurations",
		Categories: apiExtensions, strategy: validatingwebhookconfiguration.Strategy},
	{GVK: admission.WithKind("ValidatingAdmissionPolicy"), Resource: "validatingadmissionpolicies",
		Categories: apiExtensions, strategy: vapStrategy, status: validatingadmissionpolicy.NewStatusStrategy(vapStrategy)},
	{GVK: admission.WithKind("ValidatingAdmissionPolicyBinding"), Resource: "validatingadmissionpolicybindings",
		Categories: apiExtensions, strategy: validatingadmissionpolicybinding.NewStrategy(nil, nil, noResolver{})},
	{GVK: admission.WithKind("MutatingAdmissionPolicy"), Resource: "mutatingadmissionpolicies",
		Categories: apiExtensions, strategy: mutatingadmissionpolicy.NewStrategy(nil, nil)},
	{GVK: admission.WithKind("MutatingAdmissionPolicyBinding"), Resource: "mutatingadmissionpolicybindings",
		Categories: apiExtensions, strategy: mutatingadmissionpolicybinding.NewStrategy(nil, nil, noResolver{})},

	// apiextensions.k8s.io
	{GVK: ext.WithKind("CustomResourceDefinition"), Resource: "customresourcedefinitions", ShortNames: []string{"crd", "crds"},
		Categories: apiExtensions, defaultTable: true, keepsSchemaExtensions: true,
		deleteFinalizer: apiextensionsv1.CustomResourceCleanupFinalizer,
		strategy:        customresourcedefinition.NewStrategy(Scheme), status: customresourcedefinition.NewStatusStrategy(Scheme)},

	// apiregistration.k8s.io: stored only, no aggregation proxy.
	{GVK: apiregv1.WithKind("APIService"), Resource: "apiservices", Categories: apiExtensions, defaultTable: true,
		strategy: apiservice.NewStrategy(Scheme), status: apiservice.NewStatusStrategy(Scheme)},

	// apps
	{GVK: apps.WithKind("ControllerRevision"), Resource: "controllerrevisions", Namespaced: true,
		strategy: controllerrevision.Strategy},
	{GVK: apps.WithKind("DaemonSet"), Resource: "daemonsets", Namespaced: true, ShortNames: []string{"ds"}, Categories: all,
		strategy: daemonset.Strategy, status: daemonset.StatusStrategy},
	{GVK: apps.WithKind("Deployment"), Resource: "deployments", Namespaced: true, ShortNames: []string{"deploy"}, Categories: all,
		strategy: deployment.Strategy, status: deployment.StatusStrategy,
		scale: labelSelectorOf},
	{GVK: apps.WithKind("ReplicaSet"), Resource: "replicasets", Namespaced: true, ShortNames: []string{"rs"}, Categories: all,
		strategy: replicaset.Strategy, status: replicaset.StatusStrategy,
		scale: labelSelectorOf,
		attrs: replicaset.GetAttrs},
	{GVK: apps.WithKind("StatefulSet"), Resource: "statefulsets", Namespaced: true, ShortNames: []string{"sts"}, Categories: all,
		strategy: statefulset.Strategy, status: statefulset.StatusStrategy,
		scale: labelSelectorOf},

	// autoscaling: v2, then v1 of the same objects, stored as v2.
	{GVK: autoscalingv2.WithKind("HorizontalPodAutoscaler"), Resource: "horizontalpodautoscalers", Namespaced: true,
		ShortNames: []string{"hpa"}, Categories: all,
		strategy: horizontalpodautoscaler.Strategy, status: horizontalpodautoscaler.StatusStrategy},
	{GVK: autoscalingGV1.WithKind("HorizontalPodAutoscaler"), Resource: "horizontalpodautoscalers", Namespaced: true,
		ShortNames: []string{"hpa"}, Categories: all,
		strategy: horizontalpodautoscaler.Strategy, status: horizontalpodautoscaler.StatusStrategy,
		storedAs: &storedAs{gvk: autoscalingv2.WithKind("HorizontalPodAutoscaler"),
			keys: schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}}},

	// batch
	{GVK: batch.WithKind("CronJob"), Resource: "cronjobs", Namespaced: true, ShortNames: []string{"cj"}, Categories: all,
		strategy: cronjob.Strategy, status: cronjob.StatusStrategy},
	{GVK: batch.WithKind("Job"), Resource: "jobs", Namespaced: true, Categories: all,
		strategy: job.Strategy, status: job.StatusStrategy,
		attrs: job.GetAttrs},

	// certificates.k8s.io
	{GVK: certs.WithKind("CertificateSigningRequest"), Resource: "certificatesigningrequests", ShortNames: []string{"csr"},
		strategy: certificates.Strategy, status: certificates.StatusStrategy, more: csrSubresources,
		attrs: certificates.GetAttrs},
	{GVK: certs.WithKind("ClusterTrustBundle"), Resource: "clustertrustbundles", strategy: clustertrustbundle.Strategy,
		attrs: clusterTrustBundleAttrs},
	{GVK: certs.WithKind("PodCertificateRequest"), Resource: "podcertificaterequests", Namespaced: true,
		strategy: pcrStrategy,
		status:   podcertificaterequest.NewStatusStrategy(pcrStrategy, authorizerfactory.NewAlwaysAllowAuthorizer(), clock.RealClock{}),
		attrs:    podCertificateRequestAttrs},

	// coordination.k8s.io, discovery.k8s.io, events.k8s.io
	{GVK: coordination.WithKind("Lease"), Resource: "leases", Namespaced: true, strategy: lease.Strategy},
	{GVK: discovery.WithKind("EndpointSlice"), Resource: "endpointslices", Namespaced: true, strategy: endpointslice.Strategy},
	{GVK: events.WithKind("Event"), Resource: "events", Namespaced: true, ShortNames: []string{"ev"}, strategy: event.Strategy,
		storedAs: &storedAs{gvk: core.WithKind("Event"), keys: schema.GroupResource{Resource: "events"}},
		attrs:    event.GetAttrs},

	// flowcontrol.apiserver.k8s.io
	{GVK: flowcontrol.WithKind("FlowSchema"), Resource: "flowschemas",
		strategy: flowschema.Strategy, status: flowschema.StatusStrategy},
	{GVK: flowcontrol.WithKind("PriorityLevelConfiguration"), Resource: "prioritylevelconfigurations",
		strategy: prioritylevelconfiguration.Strategy, status: prioritylevelconfiguration.StatusStrategy},

	// networking.k8s.io
	{GVK: networking.WithKind("IngressClass"), Resource: "ingressclasses", strategy: ingressclass.Strategy},
	{GVK: networking.WithKind("Ingress"), Resource: "ingresses", Namespaced: true, ShortNames: []string{"ing"},
		strategy: ingress.Strategy, status: ingress.StatusStrategy},
	{GVK: networking.WithKind("IPAddress"), Resource: "ipaddresses", ShortNames: []string{"ip"}, strategy: ipaddress.Strategy},
	{GVK: networking.WithKind("NetworkPolicy"), Resource: "networkpolicies", Namespaced: true, ShortNames: []string{"netpol"},
		strategy: networkpolicy.Strategy},
	{GVK: networking.WithKind("ServiceCIDR"), Resource: "servicecidrs",
		strategy: servicecidr.Strategy, status: servicecidr.StatusStrategy},

	// node.k8s.io, policy
	{GVK: nodegv.WithKind("RuntimeClass"), Resource: "runtimeclasses", strategy: runtimeclass.Strategy},
	{GVK: policy.WithKind("PodDisruptionBudget"), Resource: "poddisruptionbudgets", Namespaced: true, ShortNames: []string{"pdb"},
		strategy: poddisruptionbudget.Strategy, status: poddisruptionbudget.StatusStrategy},

	// rbac.authorization.k8s.io
	{GVK: rbac.WithKind("ClusterRoleBinding"), Resource: "clusterrolebindings", strategy: clusterrolebinding.Strategy,
		escalation: clusterRoleBindingEscalation},
	{GVK: rbac.WithKind("ClusterRole"), Resource: "clusterroles", strategy: clusterrole.Strategy, defaultTable: true,
		escalation: clusterRoleEscalation},
	{GVK: rbac.WithKind("RoleBinding"), Resource: "rolebindings", Namespaced: true, strategy: rolebinding.Strategy,
		escalation: roleBindingEscalation},
	{GVK: rbac.WithKind("Role"), Resource: "roles", Namespaced: true, strategy: role.Strategy, defaultTable: true,
		escalation: roleEscalation},

	// resource.k8s.io
	{GVK: resourcegv.WithKind("DeviceClass"), Resource: "deviceclasses", strategy: deviceclass.Strategy},
	{GVK: resourcegv.WithKind("DeviceTaintRule"), Resource: "devicetaintrules",
		strategy: devicetaintrule.Strategy, status: devicetaintrule.StatusStrategy},
	{GVK: resourcegv.WithKind("ResourceClaim"), Resource: "resourceclaims", Namespaced: true,
		strategy: rcStrategy, status: resourceclaim.NewStatusStrategy(rcStrategy),
		attrs: resourceclaim.GetAttrs},
	{GVK: resourcegv.WithKind("ResourceClaimTemplate"), Resource: "resourceclaimtemplates", Namespaced: true,
		strategy: resourceclaimtemplate.NewStrategy(noNamespaces{}),
		attrs:    resourceclaimtemplate.GetAttrs},
	{GVK: resourcegv.WithKind("ResourceSlice"), Resource: "resourceslices", strategy: resourceslice.Strategy,
		attrs: resourceslice.GetAttrs},

	// scheduling.k8s.io
	{GVK: scheduling.WithKind("PriorityClass"), Resource: "priorityclasses", ShortNames: []string{"pc"},
		strategy: priorityclass.Strategy},

	// storage.k8s.io
	{GVK: storagegv.WithKind("CSIDriver"), Resource: "csidrivers", strategy: csidriver.Strategy},
	{GVK: storagegv.WithKind("CSINode"), Resource: "csinodes", strategy: csinode.Strategy, status: csinode.StatusStrategy},
	{GVK: storagegv.WithKind("CSIStorageCapacity"), Resource: "csistoragecapacities", Namespaced: true,
		strategy: csistoragecapacity.Strategy},
	{GVK: storagegv.WithKind("StorageClass"), Resource: "storageclasses", ShortNames: []string{"sc"}, strategy: storageclass.Strategy},
	{GVK: storagegv.WithKind("VolumeAttachment"), Resource: "volumeattachments",
		strategy: volumeattachment.Strategy, status: volumeattachment.StatusStrategy},
	{GVK: storagegv.WithKind("VolumeAttributesClass"), Resource: "volumeattributesclasses", ShortNames: []string{"vac"},
		strategy: volumeattributesclass.Strategy},

	// storagemigration.k8s.io
	{GVK: svm.WithKind("StorageVersionMigration"), Resource: "storageversionmigrations",
		strategy: storagemigration.Strategy, status: storagemigration.StatusStrategy},
}
