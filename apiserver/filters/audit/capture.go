package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// MaxObjectBytes bounds the request and response bodies kept for an
// event: kube-apiserver's limit on a request body. Larger bodies are
// logged without their objects.
const MaxObjectBytes = 3 << 20

// capture hands the audit event what kube-apiserver's handlers would:
// from Request level the request's body as its requestObject, at
// RequestResponse level the response's body as its responseObject, and at
// every level the Status of a failed (or deleting) request as its
// responseStatus, with message and reason.
func (a *Auditor) capture(next http.Handler, longRunning func(*request.RequestInfo) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ac := audit.AuditContextFrom(ctx)
		level := ac.GetEventLevel()
		if !ac.Enabled() || level.Less(auditinternal.LevelMetadata) {
			next.ServeHTTP(w, r)
			return
		}
		info, _ := request.RequestInfoFrom(ctx)
		var body *bodyTee
		// A create's object names the event's objectRef at every level.
		if (!level.Less(auditinternal.LevelRequest) || info.Verb == "create") && r.Body != nil && r.Body != http.NoBody {
			body = &bodyTee{ReadCloser: r.Body}
			r.Body = body
		}
		tee := &responseTee{ResponseWriter: w, verb: info.Verb,
			whole: !level.Less(auditinternal.LevelRequestResponse) && !longRunning(info)}
		next.ServeHTTP(responsewriter.WrapForHTTP1Or2(tee), r)
		if body != nil && !body.over {
			logRequest(ctx, ac, info, body.buf.Bytes(), r.Header.Get("Content-Type"))
		}
		tee.log(ctx, ac, info)
	})
}

// logRequest hands the event the request's body as kube-apiserver's
// handlers do: a patch as it is, an object through LogRequestObject, which
// also names the event's objectRef after it and drops its managedFields
// when the policy says so.
func logRequest(ctx context.Context, ac *audit.AuditContext, info *request.RequestInfo, data []byte, contentType string) {
	if info.Verb == "patch" {
		if patch := jsonBody(data, contentType); patch != nil && !ac.GetEventLevel().Less(auditinternal.LevelRequest) {
			ac.LogRequestPatch(patch)
		}
		return
	}
	obj := decode(data, contentType)
	if obj == nil {
		return
	}
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	audit.LogRequestObject(ctx, obj, gvr.GroupVersion(), gvr, info.Subresource, serializerFor(obj))
}

// bodyTee keeps what the handler reads of a request body, up to
// MaxObjectBytes.
type bodyTee struct {
	io.ReadCloser
	buf  bytes.Buffer
	over bool
}

func (b *bodyTee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.keep(p[:n])
	return n, err
}

func (b *bodyTee) keep(p []byte) {
	if b.over || b.buf.Len()+len(p) > MaxObjectBytes {
		b.over = true
		b.buf = bytes.Buffer{}
		return
	}
	b.buf.Write(p)
}

// responseTee keeps the response's body when the event needs it: whole
// (RequestResponse level), or a failure's or a delete's, whose Status the
// event names at every level.
type responseTee struct {
	http.ResponseWriter
	verb  string
	whole bool
	code  int
	keep  bool
	body  bodyTee
}

func (t *responseTee) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *responseTee) WriteHeader(code int) {
	if t.code == 0 {
		t.code = code
		t.keep = t.whole || code >= 400 || t.verb == "delete" || t.verb == "deletecollection"
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *responseTee) Write(p []byte) (int, error) {
	if t.code == 0 {
		t.WriteHeader(http.StatusOK)
	}
	if t.keep {
		t.body.keep(p)
	}
	return t.ResponseWriter.Write(p)
}

// log hands the event the response's Status and object (LogResponseObject
// keeps the object only at RequestResponse level, without managedFields
// when the policy says so). The Status a handler encodes may lack its code
// (a delete's success); the event's is the one written, as in
// kube-apiserver, whose response writer sets it after the handler logs.
func (t *responseTee) log(ctx context.Context, ac *audit.AuditContext, info *request.RequestInfo) {
	if !t.keep || t.body.over {
		return
	}
	obj := decode(t.body.buf.Bytes(), t.Header().Get("Content-Type"))
	if obj == nil {
		return
	}
	if _, isStatus := obj.(*metav1.Status); !isStatus && !t.whole {
		return
	}
	gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	audit.LogResponseObject(ctx, obj, gv, serializerFor(obj))
	ac.SetEventResponseStatusCode(int32(t.code))
}

// decode reads a body as the object kube-apiserver's handlers would hand
// the audit event: a Status as one; JSON and YAML objects as
// unstructured; protobuf as the typed built-in object. nil for what does
// not decode.
func decode(data []byte, contentType string) runtime.Object {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || len(data) == 0 {
		return nil
	}
	if mediaType == runtime.ContentTypeProtobuf {
		obj, _, err := protobufSerializer.Decode(data, nil, nil)
		if err != nil {
			return nil
		}
		return obj
	}
	data = jsonBody(data, contentType)
	var m map[string]any
	if data == nil || json.Unmarshal(data, &m) != nil || m == nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "Status" && u.GetAPIVersion() == "v1" {
		status := &metav1.Status{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, status) == nil {
			return status
		}
	}
	return u
}

// protobufSerializer decodes the built-in kinds' protobuf.
var protobufSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

// serializerFor is what encodes obj as JSON for the event.
func serializerFor(obj runtime.Object) runtime.NegotiatedSerializer {
	if _, ok := obj.(runtime.Unstructured); ok {
		return unstructuredscheme.NewUnstructuredNegotiatedSerializer()
	}
	return scheme.Codecs.WithoutConversion()
}

// jsonBody is a body as JSON: JSON as it is, YAML converted; nil for
// other media types (protobuf) and for what does not parse.
func jsonBody(data []byte, contentType string) []byte {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || len(data) == 0 {
		return nil
	}
	switch {
	case strings.HasSuffix(mediaType, "json"):
		if !json.Valid(data) {
			return nil
		}
	case strings.HasSuffix(mediaType, "yaml"):
		if data, err = yaml.YAMLToJSON(data); err != nil {
			return nil
		}
	default:
		return nil
	}
	return data
}
