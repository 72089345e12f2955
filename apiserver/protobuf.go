package apiserver

import (
	"bytes"
	"encoding/binary"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/registry"
)

// Kubernetes protobuf, as k8s.io/apimachinery's protobuf serializer
// writes it: the prefix "k8s\x00", then a runtime.Unknown whose typeMeta
// (field 1) names the object and whose raw (field 2) is the object's own
// message; contentEncoding (3) and contentType (4) are written empty. A
// list's message is its ListMeta (field 1) and one item message per item
// (field 2). Objects come from the item cache as messages, so lists and
// events are put together here rather than re-encoded; the tests compare
// the bytes with the upstream serializer's.

// protobufPrefix starts every Kubernetes protobuf document.
var protobufPrefix = []byte{'k', '8', 's', 0}

// Field keys (number << 3 | wire type 2, length-delimited).
const (
	field1 = 1<<3 | 2
	field2 = 2<<3 | 2
	field3 = 3<<3 | 2
	field4 = 4<<3 | 2
)

// appendField appends one length-delimited field.
func appendField(dst []byte, key byte, data []byte) []byte {
	dst = append(dst, key)
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

// fieldSize is the size of a length-delimited field of n bytes.
func fieldSize(n int) int {
	var tmp [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(tmp[:], uint64(n)) + n
}

// appendEnvelopeHead appends the prefix and the runtime.Unknown up to its
// raw bytes, which are rawSize long and follow, then envelopeTail.
func appendEnvelopeHead(dst []byte, gvk schema.GroupVersionKind, rawSize int) []byte {
	apiVersion := gvk.GroupVersion().String()
	dst = append(dst, protobufPrefix...)
	dst = append(dst, field1)
	dst = binary.AppendUvarint(dst, uint64(fieldSize(len(apiVersion))+fieldSize(len(gvk.Kind))))
	dst = appendField(dst, field1, []byte(apiVersion))
	dst = appendField(dst, field2, []byte(gvk.Kind))
	dst = append(dst, field2)
	return binary.AppendUvarint(dst, uint64(rawSize))
}

// envelopeTail is the empty contentEncoding and contentType.
var envelopeTail = []byte{field3, 0, field4, 0}

// protobufObject is one object's message in its envelope.
func protobufObject(gvk schema.GroupVersionKind, msg []byte) []byte {
	out := appendEnvelopeHead(make([]byte, 0, len(msg)+64), gvk, len(msg))
	out = append(out, msg...)
	return append(out, envelopeTail...)
}

// protobufList is a list of the kind's objects, from their messages.
type protobufList struct {
	gvk   schema.GroupVersionKind
	meta  metav1.ListMeta
	items [][]byte
}

// writeTo encodes the list and hands it to write in pieces of about
// cap(buf) bytes (one piece when buf is nil); an item larger than buf
// goes as it is.
func (l *protobufList) writeTo(write func([]byte) error, buf []byte) error {
	meta, err := l.meta.Marshal()
	if err != nil {
		return fmt.Errorf("encoding the list's metadata: %w", err)
	}
	raw := fieldSize(len(meta))
	for _, item := range l.items {
		raw += fieldSize(len(item))
	}
	whole := buf == nil
	if whole {
		buf = make([]byte, 0, raw+128)
	}
	buf = appendEnvelopeHead(buf, l.gvk, raw)
	buf = appendField(buf, field1, meta)
	for _, item := range l.items {
		buf = append(buf, field2)
		buf = binary.AppendUvarint(buf, uint64(len(item)))
		if buf, err = appendChunk(buf, item, whole, write); err != nil {
			return err
		}
	}
	buf = append(buf, envelopeTail...)
	return write(buf)
}

// protobufWatchFrame is one watch event as kube-apiserver streams it in
// protobuf: a 4-byte big-endian length, then a metav1.WatchEvent (without
// prefix or envelope) whose object is the enveloped object.
func protobufWatchFrame(typ string, object []byte) ([]byte, error) {
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: object}}
	size := ev.Size()
	out := make([]byte, 4+size)
	binary.BigEndian.PutUint32(out, uint32(size))
	if _, err := ev.MarshalToSizedBuffer(out[4:]); err != nil {
		return nil, fmt.Errorf("encoding a watch event: %w", err)
	}
	return out, nil
}

// encodeProtobuf encodes an object that is not one of the kind's own
// (a Status, a PartialObjectMetadata, a Scale) with the upstream
// serializer; it must have its kind and apiVersion set.
func encodeProtobuf(obj runtime.Object) ([]byte, error) {
	var b bytes.Buffer
	if err := registry.ProtobufCodec.Encode(obj, &b); err != nil {
		return nil, fmt.Errorf("encoding %T as protobuf: %w", obj, err)
	}
	return b.Bytes(), nil
}
