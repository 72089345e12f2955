package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
)

// output is what form a read answers in.
type output int

const (
	outputObject  output = iota // the objects themselves
	outputTable                 // meta.k8s.io/v1 Table
	outputPartial               // meta.k8s.io/v1 PartialObjectMetadata(List)
)

// encoding is the media type a response is written in.
type encoding int

const (
	encodingJSON encoding = iota
	encodingYAML
	encodingProtobuf
)

// media is the outcome of negotiating a response: its form and encoding.
type media struct {
	form output
	enc  encoding
}

// mediaTypes are the media types kube-apiserver answers in (CBOR only
// behind a feature gate that is off), in its order of preference. Only
// the names and whether a type streams matter to the negotiation.
var mediaTypes = []runtime.SerializerInfo{
	{MediaType: runtime.ContentTypeJSON, MediaTypeType: "application", MediaTypeSubType: "json",
		EncodesAsText: true, StreamSerializer: &runtime.StreamSerializerInfo{}},
	{MediaType: runtime.ContentTypeYAML, MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true},
	{MediaType: runtime.ContentTypeProtobuf, MediaTypeType: "application", MediaTypeSubType: "vnd.kubernetes.protobuf",
		StreamSerializer: &runtime.StreamSerializerInfo{}},
}

// endpoint is kube-apiserver's RequestScope as the negotiation sees it:
// objects of kinds without protobuf (custom resources) are JSON or YAML
// only, Tables JSON or YAML, PartialObjectMetadata any media type. noTable
// is a resource without a table convertor (the reviews, which kube-apiserver
// registers with create alone): no Table is offered there.
type endpoint struct{ protobuf, noTable bool }

func (e endpoint) AllowsMediaTypeTransform(_, subType string, target *schema.GroupVersionKind) bool {
	if target == nil {
		return e.protobuf || subType != "vnd.kubernetes.protobuf"
	}
	if target.GroupVersion() != metav1.SchemeGroupVersion && target.GroupVersion() != metav1beta1.SchemeGroupVersion {
		return false
	}
	switch target.Kind {
	case "Table":
		return !e.noTable && (subType == "json" || subType == "yaml")
	case "PartialObjectMetadata", "PartialObjectMetadataList":
		return true
	}
	return false
}

func (endpoint) AllowsServerVersion(v string) bool { return v == metav1.SchemeGroupVersion.Version }
func (endpoint) AllowsStreamSchema(s string) bool  { return s == "watch" }

// negotiate picks the response's form and encoding from the Accept header
// with kube-apiserver's negotiation (quality values, wildcards, as/g/v
// parameters) for a kind with protobuf or without: the first acceptable
// entry wins, else 406 with its words. A watch cannot be YAML, which has no
// stream framing.
func negotiate(r *http.Request, protobuf, watch bool) (media, error) {
	return negotiateFor(r, endpoint{protobuf: protobuf}, watch)
}

// negotiateFor is negotiate for endpoint e.
func negotiateFor(r *http.Request, e endpoint, watch bool) (media, error) {
	opts, ok := negotiated(r.Header.Get("Accept"), false, e)
	if !ok {
		return media{}, notAcceptable(false)
	}
	m := media{enc: encodingOf(opts.Accepted.MediaType)}
	if watch && m.enc == encodingYAML {
		return media{}, notAcceptable(true)
	}
	if opts.Convert != nil {
		switch opts.Convert.Kind {
		case "Table":
			m.form = outputTable
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			m.form = outputPartial
		}
	}
	return m, nil
}

func encodingOf(mediaType string) encoding {
	switch mediaType {
	case runtime.ContentTypeYAML:
		return encodingYAML
	case runtime.ContentTypeProtobuf:
		return encodingProtobuf
	}
	return encodingJSON
}

// notAcceptable is kube-apiserver's 406, which lists the media types (of
// watch streams for a watch).
func notAcceptable(stream bool) error {
	types := make([]string, 0, len(mediaTypes))
	for _, t := range mediaTypes {
		switch {
		case !stream:
			types = append(types, t.MediaType)
		case t.StreamSerializer != nil:
			types = append(types, t.MediaType+";stream=watch")
		}
	}
	return statusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("only the following media types are accepted: %s", strings.Join(types, ", ")))
}

// plainEncoding is how answers outside a kind's negotiation are written
// (errors, the scale subresource): as kube-apiserver writes a Status, in
// the first media type the Accept header takes without a transformation
// (protobuf even for custom resources), else JSON.
func plainEncoding(r *http.Request) encoding {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return encodingJSON
	}
	opts, ok := negotiated(accept, true, endpoint{})
	if !ok {
		return encodingJSON
	}
	return encodingOf(opts.Accepted.MediaType)
}

// negotiations remembers the outcome of negotiating each Accept value,
// per endpoint: a client sends the same value on every request, and
// parsing it (goautoneg) is a visible share of a GET's CPU, twice per
// request (the errors' encoding and the answer's). The
// outcome depends on the value and the endpoint alone. Bounded by count
// and by a value's length; other values are negotiated each time.
var negotiations struct {
	sync.Map // negotiationKey → *negotiatedMedia
	n        atomic.Int32
}

const (
	maxNegotiations      = 512
	maxNegotiationAccept = 256
)

// negotiationKey is an Accept value and what it was negotiated for: a
// kind's endpoint (with or without protobuf), or no kind's (plain).
type negotiationKey struct {
	accept                   string
	protobuf, noTable, plain bool
}

type negotiatedMedia struct {
	opts negotiation.MediaTypeOptions
	ok   bool
}

// negotiated is kube-apiserver's negotiation of accept for e or, when
// plain, under no kind's restrictions (plainEncoding), remembered. Callers
// do not change what it returns.
func negotiated(accept string, plain bool, e endpoint) (negotiation.MediaTypeOptions, bool) {
	key := negotiationKey{accept: accept, protobuf: e.protobuf, noTable: e.noTable, plain: plain}
	if v, ok := negotiations.Load(key); ok {
		m := v.(*negotiatedMedia)
		return m.opts, m.ok
	}
	var restrict negotiation.EndpointRestrictions = e
	if plain {
		restrict = negotiation.DefaultEndpointRestrictions
	}
	opts, ok := negotiation.NegotiateMediaTypeOptions(accept, mediaTypes, restrict)
	if len(accept) <= maxNegotiationAccept && negotiations.n.Load() < maxNegotiations &&
		negotiations.n.Add(1) <= maxNegotiations {
		negotiations.Store(key, &negotiatedMedia{opts: opts, ok: ok})
	}
	return opts, ok
}
