package registry

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	if k.custom != nil {
		return k.decodeCustom(body, fv)
	}
	into, err := Scheme.New(k.GVK)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	gvk := k.GVK
	obj, decoded, err := strictJSON.Decode(body, &gvk, into)
	if decoded == nil || *decoded != k.GVK || (err != nil && !runtime.IsStrictDecodingError(err)) {
		// The body names another kind or cannot be decoded: read its
		// apiVersion and kind again to word the error as kube-apiserver
		// does. (Only failures pay for this second look.)
		actual, terr := k.checkTypeMeta(body)
		if terr != nil {
			return nil, nil, terr
		}
		if err == nil {
			err = fmt.Errorf("decoded as %v", decoded)
		}
		return nil, nil, k.decodeError(actual, err, body)
	}
	var warnings []string
	if err != nil {
		strictErr, _ := runtime.AsStrictDecodingError(err)
		actual := decoded
		problems := strictErr.Errors()
		if k.keepsSchemaExtensions {
			problems = slices.DeleteFunc(slices.Clone(problems), isKeptSchemaExtension)
		}
		switch {
		case len(problems) == 0 || fv == FieldValidationIgnore:
		case fv == FieldValidationStrict:
			return nil, nil, k.decodeError(actual, runtime.NewStrictDecodingError(problems), body)
		default:
			for _, e := range problems {
				warnings = append(warnings, e.Error())
			}
		}
	}
	Scheme.Default(obj)
	if k.keepsSchemaExtensions {
		obj = withSchemaExtensions(obj, body)
	}
	return obj, warnings, nil
}

// checkTypeMeta reads the body's apiVersion and kind (the kind's own when
// absent) and refuses a body of another kind or version.
func (k *Kind) checkTypeMeta(body []byte) (*schema.GroupVersionKind, error) {
	actual, err := serializerjson.DefaultMetaFactory.Interpret(body)
	if err != nil {
		return nil, k.decodeError(nil, err, body)
	}
	if actual.Group == "" && actual.Version == "" {
		actual.Group, actual.Version = k.GVK.Group, k.GVK.Version
	}
	if actual.Kind == "" {
		actual.Kind = k.GVK.Kind
	}
	if *actual == k.GVK {
		return actual, nil
	}
	if err := k.otherKindError(*actual); err != nil {
		return nil, k.decodeError(actual, err, body)
	}
	return nil, k.decodeError(actual, fmt.Errorf("no kind %q is registered for version %q", actual.Kind, actual.GroupVersion()), body)
}

// otherKindError is kube-apiserver's error for a body of another kind the
// scheme knows: its decoder reads the body as that kind and then fails to
// convert it to the internal type of the kind (apimachinery's converter
// words it). nil when the scheme does not know the body's kind, or when it
// is this kind in another version.
func (k *Kind) otherKindError(actual schema.GroupVersionKind) error {
	if actual.GroupKind() == k.GVK.GroupKind() || !Scheme.Recognizes(actual) {
		return nil
	}
	from, err := Scheme.New(actual)
	if err != nil {
		return nil
	}
	to, err := Scheme.New(k.GVK.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil
	}
	return fmt.Errorf("converting (%s) to (%s): unknown conversion", reflect.TypeOf(from).Elem(), reflect.TypeOf(to).Elem())
}

// decodeError words a body the kind cannot decode as kube-apiserver does:
// naming the body's kind and version when it has them, else the start of
// the body.
func (k *Kind) decodeError(actual *schema.GroupVersionKind, err error, body []byte) error {
	if actual != nil && actual.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			actual.Kind, actual.Version, k.GVK.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)",
		k.GVK.Kind, err, summarize(body, 30)))
}

// summarize is the start of a body for an error message: JSON as text,
// anything else in hex.
func summarize(data []byte, max int) string {
	more := ""
	if len(data) > max {
		data, more = data[:max], " ..."
	}
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		return string(data) + more
	}
	return hex.EncodeToString(data) + more
}

// protobufCodec reads the protobuf bodies client-go's typed clients send.
var protobufCodec = protobuf.NewSerializer(Scheme, Scheme)

// ProtobufToJSON decodes a Kubernetes protobuf body of the kind and
// returns it as JSON, so that the body can take the JSON path.
func (k *Kind) ProtobufToJSON(body []byte) ([]byte, error) {
	obj, _, err := k.decodeProtobuf(body)
	if err != nil {
		return nil, err
	}
	return protobufAsJSON(obj)
}

// DecodeProtobuf is Decode for a Kubernetes protobuf body: the kind's
// external object with kube-apiserver's defaults. Protobuf has no unknown
// or duplicate fields to report, so fieldValidation does not apply, as in
// kube-apiserver. A body of another kind takes the JSON path, which words
// the error.
func (k *Kind) DecodeProtobuf(body []byte, fv FieldValidation) (runtime.Object, []string, error) {
	obj, decoded, err := k.decodeProtobuf(body)
	if err != nil {
		return nil, nil, err
	}
	if decoded == nil || *decoded != k.GVK {
		data, err := protobufAsJSON(obj)
		if err != nil {
			return nil, nil, err
		}
		return k.Decode(data, fv)
	}
	Scheme.Default(obj)
	return obj, nil, nil
}

func (k *Kind) decodeProtobuf(body []byte) (runtime.Object, *schema.GroupVersionKind, error) {
	if k.custom != nil {
		return nil, nil, k.errProtobufCustom()
	}
	gvk := k.GVK
	obj, decoded, err := protobufCodec.Decode(body, &gvk, nil)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a valid protobuf %s: %v", k.GVK.Kind, err))
	}
	return obj, decoded, nil
}

func protobufAsJSON(obj runtime.Object) ([]byte, error) {
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
