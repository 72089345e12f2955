package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// parseListOptions reads list and watch query parameters into the storage
// layer's options, with kube-apiserver's parameter codec and validation.
// Malformed values (a selector that does not parse, a non-integer limit)
// are 400; invalid combinations 422 Invalid on ListOptions. The field
// selector is checked against the fields the kind can be selected by.
func parseListOptions(q url.Values, watch bool, kind *registry.Kind) (*metainternalversion.ListOptions, storage.ListOptions, error) {
	in := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, in); err != nil {
		return nil, storage.ListOptions{}, apierrors.NewBadRequest(err.Error())
	}
	in.Watch = in.Watch || watch
	if errs := metainternalversionvalidation.ValidateListOptions(in, true); len(errs) > 0 {
		return nil, storage.ListOptions{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	field, err := kind.ConvertFieldSelector(in.FieldSelector)
	if err != nil {
		return nil, storage.ListOptions{}, err
	}
	in.FieldSelector = field
	out := storage.ListOptions{
		ResourceVersion: in.ResourceVersion, ResourceVersionMatch: in.ResourceVersionMatch,
		Limit: in.Limit, Continue: in.Continue, Label: in.LabelSelector, Field: in.FieldSelector,
		AllowWatchBookmarks: in.AllowWatchBookmarks, SendInitialEvents: in.SendInitialEvents,
		Fields: kind.FieldsOf(),
	}
	if in.TimeoutSeconds != nil {
		out.Timeout = time.Duration(*in.TimeoutSeconds) * time.Second
	}
	return in, out, nil
}

// tableOptions reads the includeObject parameter of Table requests.
func tableOptions(q url.Values) (*metav1.TableOptions, error) {
	opts := &metav1.TableOptions{}
	switch v := metav1.IncludeObjectPolicy(q.Get("includeObject")); v {
	case "", metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		opts.IncludeObject = v
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", v))
	}
	return opts, nil
}

// writeOne writes the result of a get in the negotiated form.
func (s *Server) writeOne(w http.ResponseWriter, r *http.Request, c *call, obj *unstructured.Unstructured) {
	switch c.media.form {
	case outputTable, outputPartial:
		writeTransformed(w, r, c, http.StatusOK, obj)
	default:
		if c.media.enc == encodingProtobuf {
			// A stored object: its message may come from the item cache.
			msg, err := c.res.protos.encodeObject(obj.Object)
			if err != nil {
				writeError(w, apierrors.NewInternalError(err))
				return
			}
			writeBytes(w, http.StatusOK, runtime.ContentTypeProtobuf, protobufObject(c.res.kind.GVK, msg))
			return
		}
		writeResult(w, c, http.StatusOK, obj.Object)
	}
}

func partialOf(obj *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	p := meta.AsPartialObjectMetadata(obj)
	p.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
	return p
}

// listBody is a list as kube-apiserver encodes built-in lists: kind and
// apiVersion on the list, not on its items.
type listBody struct {
	Kind       string
	APIVersion string
	Metadata   metav1.ListMeta
	Items      [][]byte // each item's JSON (itemCache)
}

// writeList answers with list; memos, when its items come from
// storage.Store.ListMemos, keep the items' encodings (else nil).
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, c *call, list *unstructured.UnstructuredList, memos []*storage.Memo) {
	lm := metav1.ListMeta{ResourceVersion: list.GetResourceVersion(), Continue: list.GetContinue(),
		RemainingItemCount: list.GetRemainingItemCount()}
	switch c.media.form {
	case outputTable:
		opts, err := tableOptions(r.URL.Query())
		if err != nil {
			writeError(w, err)
			return
		}
		items := make([]*unstructured.Unstructured, len(list.Items))
		for i := range list.Items {
			items[i] = &list.Items[i]
		}
		table, err := c.res.kind.Table(r.Context(), items, true, opts)
		if err != nil {
			writeError(w, err)
			return
		}
		table.ListMeta = lm
		writeResult(w, c, http.StatusOK, table)
	case outputPartial:
		out := &metav1.PartialObjectMetadataList{ListMeta: lm, Items: make([]metav1.PartialObjectMetadata, len(list.Items))}
		out.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"))
		for i := range list.Items {
			out.Items[i] = *partialOf(&list.Items[i])
		}
		writeResult(w, c, http.StatusOK, out)
	case outputObject:
		if c.media.enc == encodingProtobuf {
			items, err := c.res.protos.encodeItems(list.Items, memos)
			if err != nil {
				writeError(w, apierrors.NewInternalError(err))
				return
			}
			writeResult(w, c, http.StatusOK, &protobufList{gvk: c.res.kind.ListGVK(), meta: lm, items: items})
			return
		}
		gvk := c.res.kind.ListGVK()
		body := listBody{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String(), Metadata: lm}
		items, err := c.res.items.encodeItems(list.Items, memos)
		if err != nil {
			writeError(w, apierrors.NewInternalError(err))
			return
		}
		body.Items = items
		writeResult(w, c, http.StatusOK, &body)
	}
}

// withoutTypeMeta returns a shallow copy of an object without kind and
// apiVersion (the object may be shared with the watch cache).
func withoutTypeMeta(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "kind" && k != "apiVersion" {
			out[k] = v
		}
	}
	return out
}
