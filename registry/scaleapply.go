package registry

import (
	"fmt"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/stratadev/strata/fieldmanager"
)

// scaleFieldManager is the field manager kube-apiserver installs for the
// scale subresources: one of autoscaling/v1 Scale, its hub the internal
// autoscaling version, whatever the parent kind (apiextensions-apiserver
// builds the same for custom resources).
var scaleFieldManager = sync.OnceValues(func() (*fieldmanager.Manager, error) {
	tc, err := builtinTypes()
	if err != nil {
		return nil, err
	}
	return fieldmanager.New(fieldmanager.Config{TypeConverter: tc, Converter: Scheme, Defaulter: Scheme, Creater: Scheme,
		Kind: autoscalingv1.SchemeGroupVersion.WithKind("Scale"),
		Hub:  schema.GroupVersion{Group: "autoscaling", Version: runtime.APIVersionInternal}, Subresource: "scale"})
})

// ApplyScale applies a server-side apply configuration of an autoscaling/v1
// Scale to the scale of u (old, read by ScaleOf), as kube-apiserver's scale
// subresources do: the parent's managedFields are translated to the
// Scale's (managedfields.ScaleHandler), the Scale's field manager applies
// the configuration (conflicts on .spec.replicas, force), and the Scale's
// managedFields are translated back. It returns the applied Scale, the
// parent's new managedFields and the apply's warnings.
func (k *Kind) ApplyScale(u *unstructured.Unstructured, old *autoscalingv1.Scale, config []byte,
	opts fieldmanager.ApplyOptions) (*autoscalingv1.Scale, []metav1.ManagedFieldsEntry, []string, error) {
	fm, err := scaleFieldManager()
	if err != nil {
		return nil, nil, nil, apierrors.NewInternalError(fmt.Errorf("the scale subresource's field manager: %w", err))
	}
	handler := managedfields.NewScaleHandler(u.GetManagedFields(), k.GVK.GroupVersion(), k.scaleMappings())
	live := old.DeepCopy()
	if live.ManagedFields, err = handler.ToSubresource(); err != nil {
		return nil, nil, nil, apierrors.NewInternalError(fmt.Errorf("managedFields of %s %q as a Scale's: %w", k.Resource, u.GetName(), err))
	}
	out, warnings, err := fm.Apply(live, config, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	sc, ok := out.(*autoscalingv1.Scale)
	if !ok {
		return nil, nil, nil, apierrors.NewInternalError(fmt.Errorf("the applied Scale is a %T", out))
	}
	parent, err := handler.ToParent(sc.ManagedFields)
	if err != nil {
		return nil, nil, nil, apierrors.NewInternalError(fmt.Errorf("a Scale's managedFields as %s %q's: %w", k.Resource, u.GetName(), err))
	}
	return sc, parent, warnings, nil
}

// scaleMappings are the paths of the replicas in each version of the kind,
// as kube-apiserver gives them to the ScaleHandler: spec.replicas of the
// one version of a built-in kind; for a custom kind, specReplicasPath of
// each version of its CRD, nil for a version without a scale subresource
// (the handler drops the managedFields entries of versions it has no
// mapping for).
func (k *Kind) scaleMappings() managedfields.ResourcePathMappings {
	if k.scale != nil {
		return managedfields.ResourcePathMappings{k.GVK.GroupVersion().String(): fieldpath.MakePathOrDie("spec", "replicas")}
	}
	crd := k.CRD()
	mappings := managedfields.ResourcePathMappings{}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		if v.Subresources == nil || v.Subresources.Scale == nil {
			mappings[gv] = nil
			continue
		}
		var path fieldpath.Path
		for _, name := range strings.Split(strings.TrimPrefix(v.Subresources.Scale.SpecReplicasPath, "."), ".") {
			path = append(path, fieldpath.PathElement{FieldName: &name})
		}
		mappings[gv] = path
	}
	return mappings
}
