package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/internal/jsonenc"
	"github.com/stratadev/strata/registry"
	strataschema "github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// servePatch answers PATCH with a strategic merge patch (strata's engine,
// with the kind's schema: struct tags for built-in kinds, the CRD's schema
// for custom ones), a JSON merge patch or a JSON patch.
// The patch is applied to the current object inside the guaranteed update,
// so a write conflict applies it again to the newer state; a patch that
// fails changes nothing.
func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, c *call) {
	patchType, err := patchTypeOf(r, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	if patchType == types.ApplyYAMLPatchType {
		s.serveApply(w, r, c)
		return
	}
	kind := c.res.kind
	var patchSchema strataschema.Type
	if patchType == types.StrategicMergePatchType {
		if patchSchema, _, err = kind.PatchSchema(); err != nil {
			writeError(w, apierrors.NewInternalError(fmt.Errorf("the schema of %s: %w", kind.GroupResource(), err)))
			return
		}
	}
	params, apply, err := s.readPatch(r, c, patchType, patchSchema)
	if err != nil {
		writeError(w, err)
		return
	}
	warnings := &registry.Warnings{}
	var decodeWarnings []string
	manager := fieldmanager.ManagerName(params.fieldManager, r.UserAgent())
	ctx := kind.Context(r.Context(), c.info.Namespace, "patch", c.info.Subresource, warnings)
	out, err := c.res.store.Update(ctx, c.info.Namespace, c.info.Name, c.info.Subresource, func(cur *registry.Current) (runtime.Object, error) {
		current, err := jsonenc.Marshal(cur.Object)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(current)
		if err != nil {
			return nil, err
		}
		obj, ws, err := kind.Decode(patched, params.fieldValidation)
		if err != nil {
			// The patch made an object the kind cannot hold: kube-apiserver
			// answers 422 on the patch.
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{{Type: field.ErrorTypeInvalid,
				Field: "patch", BadValue: field.OmitValueType{}, Detail: err.Error()}})
		}
		decodeWarnings = ws
		if err := checkNameMatches(obj, c); err != nil {
			return nil, err
		}
		return s.recordUpdate(c, cur.Live(), obj, manager), nil
	}, s.writeOptions(r, c, params, "patch"))
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	writeWritten(w, r, c, http.StatusOK, out)
}

// patchTypes are the patch media types served, in kube-apiserver's order.
// application/apply-patch+cbor is not among them: kube-apiserver v1.37
// serves it only behind the CBORServingAndStorage feature gate, which is
// off by default.
var patchTypes = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType}

// patchTypeOf reads the patch type from Content-Type of a patch of kind;
// any other is kube-apiserver's 415. Built-in resources sit behind
// go-restful there, whose router refuses a Content-Type the PATCH route
// does not consume before the patch handler runs, with a Status of its
// own words; custom resources have the apiextensions handler, which runs
// the patch handler's check (listing what strata serves, strategic merge
// patch included).
func patchTypeOf(r *http.Request, kind *registry.Kind) (types.PatchType, error) {
	contentType := r.Header.Get("Content-Type")
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mediaType = contentType
	}
	if pt := types.PatchType(mediaType); slices.Contains(patchTypes, pt) {
		return pt, nil
	}
	if kind.CRD() == nil {
		return "", apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "",
			"415: Unsupported Media Type", 0, false)
	}
	accepted := make([]string, len(patchTypes))
	for i, pt := range patchTypes {
		accepted[i] = string(pt)
	}
	return "", statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "))
}

// patchFunc applies a parsed patch to a current object's JSON.
type patchFunc func(current []byte) ([]byte, error)

// readPatch reads a PATCH request of a type: its options, and its body
// (size and nesting limits), parsed once into its application. A strategic
// merge patch follows schema.
func (s *Server) readPatch(r *http.Request, c *call, patchType types.PatchType, patchSchema strataschema.Type) (writeParams, patchFunc, error) {
	params, err := parseWriteParams(r.URL.Query(), "patch", patchType)
	if err != nil {
		return writeParams{}, nil, err
	}
	patch, err := s.readBody(r)
	if err != nil {
		return writeParams{}, nil, err
	}
	if err := checkDepth(patch); err != nil {
		return writeParams{}, nil, err
	}
	apply, err := s.patcher(c, patchType, patch, patchSchema)
	return params, apply, err
}

// patcher parses the patch once (a body that is not a patch of its type
// is 400) and returns its application.
// kube-apiserver's bounds on a JSON patch: its operations
// (maxJSONPatchOperations in k8s.io/apiserver's patch handler) and the
// bytes its copy operations may add (--json-patch-max-copy-bytes' default,
// twice the largest object): without them a 2 KB patch of copies that
// double the object drives the server out of memory.
const (
	maxJSONPatchOperations = 10000
	maxJSONPatchCopyBytes  = 3 * 1024 * 1024
)

func (s *Server) patcher(c *call, pt types.PatchType, patch []byte, patchSchema strataschema.Type) (patchFunc, error) {
	kind := c.res.kind
	switch pt {
	case types.JSONPatchType:
		var list []any
		if err := json.Unmarshal(patch, &list); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if len(list) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(list)))
		}
		ops, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			// A list of operations with one that is not: kube-apiserver
			// rejects it when applying, as 422.
			return nil, invalidPatch(kind, c.info.Name, field.NewPath("patch"), err.Error())
		}
		opts := jsonpatch.NewApplyOptions()
		opts.AccumulatedCopySizeLimit = maxJSONPatchCopyBytes
		return func(current []byte) ([]byte, error) {
			out, err := ops.ApplyWithOptions(current, opts)
			if err != nil {
				return nil, invalidPatch(kind, c.info.Name, field.NewPath("patch"), err.Error())
			}
			return out, nil
		}, nil
	case types.MergePatchType:
		if err := requireObject(patch); err != nil {
			return nil, err
		}
		return func(current []byte) ([]byte, error) {
			out, err := jsonpatch.MergePatch(current, patch)
			if err != nil {
				return nil, invalidPatch(kind, c.info.Name, field.NewPath("patch"), err.Error())
			}
			return out, nil
		}, nil
	}
	if err := requireObject(patch); err != nil {
		return nil, err
	}
	return s.strategicPatcher(c, patchSchema, patch), nil
}

func (s *Server) strategicPatcher(c *call, t strataschema.Type, patch []byte) patchFunc {
	opts := strategicpatch.Options{Compat: s.cfg.PatchCompat}
	return func(current []byte) ([]byte, error) {
		out, err := strategicpatch.ApplyJSON(current, patch, t, opts)
		if err == nil {
			return out, nil
		}
		var perr *strategicpatch.Error
		if errors.As(err, &perr) {
			path := field.NewPath("patch")
			if perr.Path != "" {
				path = field.NewPath(perr.Path)
			}
			return nil, invalidPatch(c.res.kind, c.info.Name, path, err.Error())
		}
		return nil, apierrors.NewInternalError(err)
	}
}

// requireObject refuses a merge or strategic patch that is not a JSON
// object with 400, as kube-apiserver does.
func requireObject(patch []byte) error {
	var v any
	if err := json.Unmarshal(patch, &v); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if _, ok := v.(map[string]any); !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: the patch must be a JSON object, not %s", jsonKind(v)))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// invalidPatch is a rejected patch: 422 Invalid naming the path and rule.
func invalidPatch(kind *registry.Kind, name string, path *field.Path, detail string) error {
	return apierrors.NewInvalid(kind.GVK.GroupKind(), name, field.ErrorList{
		{Type: field.ErrorTypeInvalid, Field: path.String(), BadValue: field.OmitValueType{}, Detail: detail}})
}
