package registry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// protoMessage is what the generated protobuf code of the k8s.io/api types
// gives each object: its message, without the runtime.Unknown envelope and
// without kind and apiVersion (which only the envelope carries).
type protoMessage interface {
	runtime.Object
	Marshal() ([]byte, error)
}

// HasProtobuf says whether objects of the kind can be answered in
// Kubernetes protobuf. Built-in kinds have generated protobuf encodings;
// custom resources have none, and kube-apiserver answers them in JSON or
// YAML only.
func (k *Kind) HasProtobuf() bool { return k.custom == nil }

// ProtobufMessage returns the protobuf message of an object of the kind
// (stored content, in the served version): the bytes a list item is, and
// that an object's runtime.Unknown envelope wraps.
func (k *Kind) ProtobufMessage(content map[string]any) ([]byte, error) {
	if k.custom != nil {
		return nil, k.errProtobufCustom()
	}
	obj, err := Scheme.New(k.GVK)
	if err != nil {
		return nil, fmt.Errorf("registry: new %s: %w", k.GVK, err)
	}
	msg, ok := obj.(protoMessage)
	if !ok {
		return nil, fmt.Errorf("registry: %s has no protobuf encoding", k.GVK)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj); err != nil {
		return nil, fmt.Errorf("registry: converting %s to protobuf: %w", k.GVK.Kind, err)
	}
	data, err := msg.Marshal()
	if err != nil {
		return nil, fmt.Errorf("registry: encoding %s as protobuf: %w", k.GVK.Kind, err)
	}
	return data, nil
}

// ProtobufCodec encodes and decodes Kubernetes protobuf (the "k8s\x00"
// prefix and runtime.Unknown envelope) with the built-in types.
var ProtobufCodec runtime.Serializer = protobufCodec
