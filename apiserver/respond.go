package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/stratadev/strata/internal/jsonenc"
	"github.com/stratadev/strata/registry"
)

// statusOf turns any error into the Status kube-apiserver would answer: an
// APIStatus error as it is, anything else as 500 InternalError.
func statusOf(err error) *metav1.Status {
	var as apierrors.APIStatus
	if errors.As(err, &as) {
		st := as.Status()
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
		return &st
	}
	st := apierrors.NewInternalError(err).Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return &st
}

// writeError writes err as a Status, with Retry-After when it asks for
// one, in the encoding the request's errors take (errorWriter).
func writeError(w http.ResponseWriter, err error) {
	st := statusOf(err)
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	enc := encodingJSON
	if ew, ok := w.(*errorWriter); ok {
		enc = ew.enc
	}
	writeEncoded(w, code, st, enc)
}

// errorWriter carries the encoding of a request's errors (plainEncoding)
// to writeError, which every handler calls with the writer alone.
type errorWriter struct {
	http.ResponseWriter
	enc encoding
}

func (w *errorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *errorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withErrorEncoding wraps w when the request's errors are not JSON.
func withErrorEncoding(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if enc := plainEncoding(r); enc != encodingJSON {
		return &errorWriter{ResponseWriter: w, enc: enc}
	}
	return w
}

// encodeJSON encodes a response as encoding/json would, with the
// unstructured content of objects, lists and watch events encoded without
// reflection (jsonenc): a large list spends most of its time here.
func encodeJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case *listBody:
		var out []byte // writeTo without a buffer writes once, all of it
		if err := x.writeTo(func(p []byte) error { out = p; return nil }, nil); err != nil {
			return nil, err
		}
		return out, nil
	case watchEvent:
		out := append(make([]byte, 0, 512), `{"type":`...)
		out, _ = jsonenc.Append(out, string(x.Type))
		out = append(out, `,"object":`...)
		out, err := jsonenc.Append(out, x.Object)
		if err != nil {
			return nil, err
		}
		return append(out, '}'), nil
	}
	return jsonenc.Marshal(v)
}

// writeJSON writes v as JSON with the given status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	if body, ok := v.(*listBody); ok {
		writeChunked(w, code, runtime.ContentTypeJSON, body)
		return
	}
	data, err := encodeJSON(v)
	if err != nil {
		code, data = http.StatusInternalServerError, internalErrorBody(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

func internalErrorBody(err error) []byte {
	st := apierrors.NewInternalError(fmt.Errorf("encoding the response: %w", err)).Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	data, _ := json.Marshal(st) // a Status always encodes
	return data
}

// writeObject writes v in the media type the request accepts (plainEncoding):
// protobuf only for a runtime.Object (such as a Scale), which must have its
// kind and apiVersion set.
func writeObject(w http.ResponseWriter, r *http.Request, code int, v any) {
	enc := plainEncoding(r)
	if _, ok := v.(runtime.Object); !ok && enc == encodingProtobuf {
		enc = encodingJSON
	}
	writeEncoded(w, code, v, enc)
}

// writeResult writes the result of a resource request in the negotiated
// encoding: an object of the kind as content, a list body, or a
// runtime.Object such as a Status. The object of a write is encoded
// afresh: a dry run answers an object that has the stored one's
// resourceVersion but not its content, so it must not meet the item cache.
func writeResult(w http.ResponseWriter, c *call, code int, v any) {
	if content, ok := v.(map[string]any); ok && c.media.enc == encodingProtobuf {
		msg, err := c.res.kind.ProtobufMessage(content)
		if err != nil {
			writeError(w, apierrors.NewInternalError(err))
			return
		}
		writeBytes(w, code, runtime.ContentTypeProtobuf, protobufObject(c.res.kind.GVK, msg))
		return
	}
	writeEncoded(w, code, v, c.media.enc)
}

// writeWritten answers a write with the object stored, in the negotiated
// form. In protobuf it encodes the typed object the object was prepared
// from, when there is one, rather than converting the stored object back.
func writeWritten(w http.ResponseWriter, r *http.Request, c *call, code int, out registry.Written) {
	if c.media.form != outputObject {
		writeTransformed(w, r, c, code, out.Unstructured)
		return
	}
	if out.Prepared != nil && c.media.enc == encodingProtobuf {
		msg, ok, err := out.Prepared.ProtobufOf(out.GetResourceVersion())
		if err != nil {
			writeError(w, apierrors.NewInternalError(err))
			return
		}
		if ok {
			writeBytes(w, code, runtime.ContentTypeProtobuf, protobufObject(c.res.kind.GVK, msg))
			return
		}
	}
	writeResult(w, c, code, out.Object)
}

// writeEncoded writes v as JSON, YAML or protobuf (which v must have: a
// runtime.Object with its protobuf encoding, or a protobufList).
func writeEncoded(w http.ResponseWriter, code int, v any, enc encoding) {
	switch enc {
	case encodingJSON:
		writeJSON(w, code, v)
		return
	case encodingProtobuf:
		if body, ok := v.(*protobufList); ok {
			writeChunked(w, code, runtime.ContentTypeProtobuf, body)
			return
		}
		obj, ok := v.(runtime.Object)
		if !ok {
			writeJSON(w, http.StatusInternalServerError, statusOf(fmt.Errorf("no protobuf encoding of %T", v)))
			return
		}
		data, err := encodeProtobuf(obj)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, statusOf(err))
			return
		}
		writeBytes(w, code, runtime.ContentTypeProtobuf, data)
		return
	}
	data, err := encodeJSON(v)
	if err == nil {
		data, err = yaml.JSONToYAML(data)
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, statusOf(apierrors.NewInternalError(err)))
		return
	}
	writeBytes(w, code, runtime.ContentTypeYAML, data)
}

func writeBytes(w http.ResponseWriter, code int, contentType string, data []byte) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// addWarnings writes Warning headers as kube-apiserver does: code 299,
// agent "-", the text quoted.
func addWarnings(w http.ResponseWriter, warnings []string) {
	for _, text := range warnings {
		w.Header().Add("Warning", "299 - "+strconv.Quote(text))
	}
}

// statusError builds a Status error for codes apierrors has no constructor
// for.
func statusError(code int32, reason metav1.StatusReason, message string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message}}
}

// listChunkBytes is how much of a list body is written at a time.
const listChunkBytes = 64 << 10

// listChunks are the buffers list bodies are written through: a list is
// written in chunks rather than assembled whole, so that a large list does
// not allocate its size again on every request.
var listChunks = sync.Pool{New: func() any { b := make([]byte, 0, listChunkBytes); return &b }}

// chunked is a list body that writes itself in pieces (writeTo).
type chunked interface {
	writeTo(write func([]byte) error, buf []byte) error
}

// writeChunked writes a list body in chunks. The status line goes with
// the first chunk, so a list that cannot be encoded is still answered
// with a 500 Status.
func writeChunked(w http.ResponseWriter, code int, contentType string, body chunked) {
	buf := listChunks.Get().(*[]byte)
	defer listChunks.Put(buf)
	started := false
	err := body.writeTo(func(p []byte) error {
		if !started {
			started = true
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(code)
		}
		_, err := w.Write(p)
		return err
	}, (*buf)[:0])
	if err != nil && !started {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(append(internalErrorBody(err), '\n'))
	}
}

// writeTo encodes the list as encoding/json would and hands it to write
// in pieces of about cap(buf) bytes (one piece when buf is nil), followed
// by a newline when buf is not nil. An item larger than buf goes as it is.
func (b *listBody) writeTo(write func([]byte) error, buf []byte) error {
	meta, err := json.Marshal(&b.Metadata)
	if err != nil {
		return err
	}
	whole := buf == nil
	if whole {
		size := len(meta) + len(b.Kind) + len(b.APIVersion) + 64
		for _, item := range b.Items {
			size += len(item) + 1
		}
		buf = make([]byte, 0, size)
	}
	buf = append(buf, `{"kind":`...)
	buf, _ = jsonenc.Append(buf, b.Kind)
	buf = append(buf, `,"apiVersion":`...)
	buf, _ = jsonenc.Append(buf, b.APIVersion)
	buf = append(buf, `,"metadata":`...)
	buf = append(buf, meta...)
	buf = append(buf, `,"items":[`...)
	for i, item := range b.Items {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, err = appendChunk(buf, item, whole, write); err != nil {
			return err
		}
	}
	buf = append(buf, "]}"...)
	if !whole {
		buf = append(buf, '\n')
	}
	return write(buf)
}

// appendChunk appends item to buf, which write sends in pieces of about
// cap(buf) bytes (the JSON and the protobuf list writers share it): when
// item does not fit, buf goes first, and an item larger than buf goes as it
// is. A whole buf, sent as one piece, only grows.
func appendChunk(buf, item []byte, whole bool, write func([]byte) error) ([]byte, error) {
	if whole || len(buf)+len(item) <= cap(buf) {
		return append(buf, item...), nil
	}
	if err := write(buf); err != nil {
		return nil, err
	}
	buf = buf[:0]
	if len(item) > cap(buf) {
		return buf, write(item)
	}
	return append(buf, item...), nil
}
