package registry

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/kubernetes/pkg/apis/certificates"
)

// attrsFunc is the GetAttrs function of a kind's upstream registry
// package: the labels and the fields a selector can match.
type attrsFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// ConvertFieldSelector checks a list's or watch's field selector against
// the fields the kind can be selected by, with the field label conversion
// functions the kind's version registers in the scheme (metadata.name and
// metadata.namespace without one), and returns it with the labels
// converted. An unsupported field is a 400 worded by the scheme, as
// kube-apiserver answers ("field label not supported: spec.foo").
func (k *Kind) ConvertFieldSelector(sel fields.Selector) (fields.Selector, error) {
	if sel == nil || sel.Empty() {
		return sel, nil
	}
	out, err := sel.Transform(func(label, value string) (string, string, error) {
		return Scheme.ConvertFieldLabel(k.GVK, label, value)
	})
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return out, nil
}

// FieldsOf returns the function that gives a stored object's selectable
// fields, as the kind's upstream GetAttrs computes them from the internal
// object (pods' spec.nodeName and status.phase, events' involvedObject.*,
// secrets' type, ...). It is nil for kinds selectable by metadata.name and
// metadata.namespace only, which storage matches itself.
func (k *Kind) FieldsOf() func(*unstructured.Unstructured) fields.Set {
	if k.attrs == nil {
		return nil
	}
	return func(u *unstructured.Unstructured) fields.Set {
		internal, err := k.internalOf(u)
		if err != nil {
			return nil
		}
		_, set, err := k.attrs(internal)
		if err != nil {
			return nil
		}
		return set
	}
}

// clusterTrustBundleAttrs and podCertificateRequestAttrs are the getAttrs
// of k8s.io/kubernetes/pkg/registry/certificates/{clustertrustbundle,
// podcertificaterequest}/storage, which those packages do not export:
// copied as they are.
func clusterTrustBundleAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	bundle, ok := obj.(*certificates.ClusterTrustBundle)
	if !ok {
		return nil, nil, fmt.Errorf("not a clustertrustbundle")
	}
	selectableFields := generic.MergeFieldsSets(generic.ObjectMetaFieldsSet(&bundle.ObjectMeta, false), fields.Set{
		"spec.signerName": bundle.Spec.SignerName,
	})
	return labels.Set(bundle.Labels), selectableFields, nil
}

func podCertificateRequestAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	req, ok := obj.(*certificates.PodCertificateRequest)
	if !ok {
		return nil, nil, fmt.Errorf("not a podcertificaterequest")
	}
	selectableFields := generic.MergeFieldsSets(generic.ObjectMetaFieldsSet(&req.ObjectMeta, true), fields.Set{
		"spec.signerName": req.Spec.SignerName,
		"spec.podName":    req.Spec.PodName,
		"spec.nodeName":   string(req.Spec.NodeName),
	})
	return labels.Set(req.Labels), selectableFields, nil
}
