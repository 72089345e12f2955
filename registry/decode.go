package registry

import (
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// FieldValidation is the fieldValidation query parameter: what to do with
// unknown and duplicate fields in a body.
type FieldValidation string

// The values of fieldValidation; the empty string means Warn, kube-apiserver's
// default.
const (
	FieldValidationIgnore FieldValidation = metav1.FieldValidationIgnore
	FieldValidationWarn   FieldValidation = metav1.FieldValidationWarn
	FieldValidationStrict FieldValidation = metav1.FieldValidationStrict
)

// strictJSON decodes strictly: unknown and duplicate fields come back as a
// strict decoding error beside a fully decoded object.
var strictJSON = serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, Scheme, Scheme,
	serializerjson.SerializerOptions{Strict: true})

// Decode parses a JSON body as the kind's external type, checks its
// apiVersion and kind, and applies kube-apiserver's defaults. Unknown or
// duplicate fields are a 400 under Strict and warnings under Warn.
func (k *Kind) Decode(body []byte, fv FieldValidation) (runtime.Object, []string, error) {
	into, err := Scheme.New(k.GVK)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	if err := k.checkTypeMeta(body); err != nil {
		return nil, nil, err
	}
	gvk := k.GVK
	obj, _, err := strictJSON.Decode(body, &gvk, into)
	var warnings []string
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, nil, apierrors.NewBadRequest(decodeMessage(err))
		}
		switch fv {
		case FieldValidationStrict:
			return nil, nil, apierrors.NewBadRequest(strictErr.Error())
		case FieldValidationIgnore:
		default:
			for _, e := range strictErr.Errors() {
				warnings = append(warnings, e.Error())
			}
		}
	}
	Scheme.Default(obj)
	return obj, warnings, nil
}

// checkTypeMeta refuses a body whose apiVersion or kind (when given) is
// not the kind's.
func (k *Kind) checkTypeMeta(body []byte) error {
	actual, err := serializerjson.DefaultMetaFactory.Interpret(body)
	if err != nil {
		return apierrors.NewBadRequest(decodeMessage(err))
	}
	if (actual.Group != "" || actual.Version != "") && actual.GroupVersion() != k.GVK.GroupVersion() {
		return apierrors.NewBadRequest(fmt.Sprintf(
			"the API version in the data (%s) does not match the expected API version (%s)",
			actual.GroupVersion(), k.GVK.GroupVersion()))
	}
	if actual.Kind != "" && actual.Kind != k.GVK.Kind {
		return apierrors.NewBadRequest(fmt.Sprintf(
			"the kind in the data (%s) does not match the expected kind (%s)", actual.Kind, k.GVK.Kind))
	}
	return nil
}

// decodeMessage words a decoding error as kube-apiserver does for a body
// that is not an object of the kind at all.
func decodeMessage(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "couldn't get version/kind") || strings.Contains(msg, "json: cannot unmarshal") ||
		strings.Contains(msg, "invalid character") || strings.Contains(msg, "unexpected end") {
		return fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml; %v", msg)
	}
	return msg
}

// protobufCodec reads the protobuf bodies client-go's typed clients send.
var protobufCodec = protobuf.NewSerializer(Scheme, Scheme)

// ProtobufToJSON decodes a Kubernetes protobuf body of the kind and
// returns it as JSON, so every body then takes the JSON path.
func (k *Kind) ProtobufToJSON(body []byte) ([]byte, error) {
	gvk := k.GVK
	obj, _, err := protobufCodec.Decode(body, &gvk, nil)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a valid protobuf %s: %v", k.GVK.Kind, err))
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return data, nil
}

// DecodeDeleteOptions reads a DELETE body: JSON (or YAML) or protobuf.
func DecodeDeleteOptions(body []byte, contentType string) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if len(body) == 0 {
		return opts, nil
	}
	var err error
	if strings.HasPrefix(contentType, runtime.ContentTypeProtobuf) {
		_, _, err = protobufCodec.Decode(body, nil, opts)
	} else {
		err = yaml.Unmarshal(body, opts)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not DeleteOptions: %v", err))
	}
	return opts, nil
}
