package apiserver

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/stratadev/strata/registry"
)

// readBody reads a request body up to the configured limit; more is 413.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	limit := s.cfg.MaxRequestBodyBytes
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if int64(len(data)) > limit {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	return data, nil
}

// unsupportedBody is kube-apiserver's 415 for a body it cannot decode.
func unsupportedBody(contentType string) error {
	return statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, fmt.Sprintf(
		"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got %q)", contentType))
}

// readObject reads a body (a Scale update) as JSON: JSON as sent, YAML
// converted, protobuf decoded as the kind (which a custom kind refuses with
// 415, as kube-apiserver does). Other media types are 415. Create and update
// bodies are read by readDecoded.
func (s *Server) readObject(r *http.Request, kind *registry.Kind) ([]byte, error) {
	contentType := r.Header.Get("Content-Type")
	mediaType := "application/json"
	if contentType != "" {
		var err error
		if mediaType, _, err = mime.ParseMediaType(contentType); err != nil {
			return nil, unsupportedBody(contentType)
		}
	}
	if mediaType == runtime.ContentTypeProtobuf {
		body, err := s.readBody(r)
		if err != nil {
			return nil, err
		}
		return kind.ProtobufToJSON(body)
	}
	if mediaType != "application/json" && mediaType != "application/yaml" && mediaType != "*/*" {
		return nil, unsupportedBody(contentType)
	}
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	if mediaType == "application/yaml" {
		if body, err = yaml.YAMLToJSONStrict(body); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not valid YAML: %v", err))
		}
	}
	if err := checkDepth(body); err != nil {
		return nil, err
	}
	return body, nil
}

// maxNesting bounds how deeply a body's JSON may nest, as kube-apiserver's
// decoders do, so a hostile body cannot exhaust the stack.
const maxNesting = 1000

// checkDepth rejects a body nested deeper than maxNesting with 400.
func checkDepth(body []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > maxNesting {
				return apierrors.NewBadRequest(fmt.Sprintf("the request body nests deeper than %d levels", maxNesting))
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// writeParams are the query parameters of create, update and patch.
type writeParams struct {
	dryRun          bool
	fieldValidation registry.FieldValidation
	// fieldManager is the fieldManager parameter (managedFields' manager;
	// the user agent's when empty); force is server-side apply's.
	fieldManager string
	force        bool
}

// parseWriteParams reads CreateOptions, UpdateOptions or PatchOptions (by
// verb) from the query with kube-apiserver's parameter codec and validates
// them as it does: a malformed query is 400, an unsupported value 422
// Invalid on the options kind.
func parseWriteParams(q url.Values, verb string, patchType types.PatchType) (writeParams, error) {
	var dryRun []string
	var fv, manager string
	var force bool
	var errs field.ErrorList
	var kind string
	var err error
	switch verb {
	case "create":
		o := &metav1.CreateOptions{}
		err = metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, o)
		kind, dryRun, fv, manager, errs = "CreateOptions", o.DryRun, o.FieldValidation, o.FieldManager, metavalidation.ValidateCreateOptions(o)
	case "update":
		o := &metav1.UpdateOptions{}
		err = metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, o)
		kind, dryRun, fv, manager, errs = "UpdateOptions", o.DryRun, o.FieldValidation, o.FieldManager, metavalidation.ValidateUpdateOptions(o)
	default:
		o := &metav1.PatchOptions{}
		err = metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, o)
		kind, dryRun, fv, manager, errs = "PatchOptions", o.DryRun, o.FieldValidation, o.FieldManager, metavalidation.ValidatePatchOptions(o, patchType)
		force = o.Force != nil && *o.Force
	}
	if err != nil {
		return writeParams{}, apierrors.NewBadRequest(err.Error())
	}
	if len(errs) > 0 {
		return writeParams{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return writeParams{dryRun: len(dryRun) > 0, fieldValidation: registry.FieldValidation(fv), fieldManager: manager, force: force}, nil
}

// readDecoded reads a create or update request: its options and its body,
// decoded strictly as the kind and defaulted, with the decoder's warnings.
func (s *Server) readDecoded(r *http.Request, c *call, verb string) (writeParams, runtime.Object, []string, error) {
	params, err := parseWriteParams(r.URL.Query(), verb, "")
	if err != nil {
		return writeParams{}, nil, nil, err
	}
	if isProtobuf(r) {
		// Typed clients send protobuf: decode it straight into the typed
		// object rather than through JSON.
		body, err := s.readBody(r)
		if err != nil {
			return writeParams{}, nil, nil, err
		}
		obj, warnings, err := c.res.kind.DecodeProtobuf(body, params.fieldValidation)
		return params, obj, warnings, err
	}
	body, err := s.readObject(r, c.res.kind)
	if err != nil {
		return writeParams{}, nil, nil, err
	}
	obj, warnings, err := c.res.kind.Decode(body, params.fieldValidation)
	return params, obj, warnings, err
}

// isProtobuf says whether the request's body is Kubernetes protobuf.
func isProtobuf(r *http.Request) bool {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == runtime.ContentTypeProtobuf
}
