package registry

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
)

// tables is kube-apiserver's table generator with the column handlers of
// every built-in kind.
var tables = printerstorage.TableConvertor{
	TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers),
}

// Table renders objects as the metav1.Table kubectl prints, with the
// columns kube-apiserver gives the kind. asList renders a list (header and
// one row per object); otherwise objs holds one object. Each row carries
// the object as opts.IncludeObject asks: metadata only by default, the
// whole object, or nothing.
func (k *Kind) Table(ctx context.Context, objs []*unstructured.Unstructured, asList bool, opts *metav1.TableOptions) (*metav1.Table, error) {
	var table *metav1.Table
	var err error
	if k.custom != nil {
		table, err = k.customTable(ctx, objs, asList, opts)
	} else {
		table, err = k.builtinTable(ctx, objs, asList, opts)
	}
	if err != nil {
		return nil, err
	}
	if len(table.Rows) != len(objs) {
		return nil, apierrors.NewInternalError(fmt.Errorf("table for %s: %d rows for %d objects", k.Resource, len(table.Rows), len(objs)))
	}
	for i := range table.Rows {
		row, err := rowObject(objs[i], opts)
		if err != nil {
			return nil, err
		}
		table.Rows[i].Object = row
	}
	table.APIVersion, table.Kind = metav1.SchemeGroupVersion.String(), "Table"
	return table, nil
}

// builtinTable renders built-in objects with kube-apiserver's printers.
func (k *Kind) builtinTable(ctx context.Context, objs []*unstructured.Unstructured, asList bool, opts *metav1.TableOptions) (*metav1.Table, error) {
	if k.defaultTable {
		// Name and Created At need only the metadata: no conversion.
		target, err := k.unstructuredTarget(objs, asList)
		if err != nil {
			return nil, err
		}
		return rest.NewDefaultTableConvertor(k.GroupResource()).ConvertToTable(ctx, target, opts)
	}
	var target runtime.Object
	var err error
	if asList {
		target, err = k.internalList(objs)
	} else if len(objs) == 1 {
		target, err = k.internalOf(objs[0])
	} else {
		err = fmt.Errorf("table of %d objects without a list", len(objs))
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	table, err := tables.ConvertToTable(ctx, target, opts)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("table for %s: %w", k.Resource, err))
	}
	return table, nil
}

// unstructuredTarget is objs as a table convertor takes them: an
// unstructured list when asList, else the one object.
func (k *Kind) unstructuredTarget(objs []*unstructured.Unstructured, asList bool) (runtime.Object, error) {
	if asList {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.ListGVK())
		for _, o := range objs {
			list.Items = append(list.Items, *o)
		}
		return list, nil
	}
	if len(objs) != 1 {
		return nil, apierrors.NewInternalError(fmt.Errorf("table of %d objects without a list", len(objs)))
	}
	return objs[0], nil
}

// rowObject is what a row carries of its object, as includeObject says.
func rowObject(u *unstructured.Unstructured, opts *metav1.TableOptions) (runtime.RawExtension, error) {
	include := metav1.IncludeMetadata
	if opts != nil && opts.IncludeObject != "" {
		include = opts.IncludeObject
	}
	switch include {
	case metav1.IncludeObject:
		return runtime.RawExtension{Object: u}, nil
	case metav1.IncludeMetadata:
		partial := meta.AsPartialObjectMetadata(u)
		partial.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
		return runtime.RawExtension{Object: partial}, nil
	case metav1.IncludeNone:
		// kube-apiserver keeps the metadata of the bookmark that ends a
		// watch's initial events, so that a client sees the annotation.
		if u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			return rowObject(u, &metav1.TableOptions{IncludeObject: metav1.IncludeMetadata})
		}
		return runtime.RawExtension{}, nil
	}
	return runtime.RawExtension{}, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", include))
}

// internalList builds the kind's internal list type holding objs.
func (k *Kind) internalList(objs []*unstructured.Unstructured) (runtime.Object, error) {
	list, err := Scheme.New(k.ListGVK().GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil, fmt.Errorf("new internal %s: %w", k.ListGVK().Kind, err)
	}
	items := make([]runtime.Object, len(objs))
	for i, u := range objs {
		if items[i], err = k.internalOf(u); err != nil {
			return nil, err
		}
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, fmt.Errorf("filling %s: %w", k.ListGVK().Kind, err)
	}
	return list, nil
}
