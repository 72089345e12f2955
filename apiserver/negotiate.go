package apiserver

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// output is what form a read answers in.
type output int

const (
	outputObject  output = iota // the objects themselves
	outputTable                 // meta.k8s.io/v1 Table
	outputPartial               // meta.k8s.io/v1 PartialObjectMetadata(List)
)

// mediaRange is one entry of an Accept header.
type mediaRange struct {
	typ    string
	params map[string]string
}

func parseAccept(header string) []mediaRange {
	var out []mediaRange
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		typ, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		out = append(out, mediaRange{typ: typ, params: params})
	}
	return out
}

// isJSONLike says whether a media type can be answered with JSON (or YAML).
func isJSONLike(typ string) bool {
	switch typ {
	case "application/json", "*/*", "application/*", "application/yaml", "application/json;stream=watch":
		return true
	}
	return false
}

// negotiateOutput picks the first acceptable entry of the Accept header:
// a Table or PartialObjectMetadata in meta.k8s.io v1 (or v1beta1), or the
// objects as JSON. A client accepting only protobuf or CBOR gets 406.
func negotiateOutput(r *http.Request) (output, error) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return outputObject, nil
	}
	for _, m := range parseAccept(accept) {
		if !isJSONLike(m.typ) {
			continue
		}
		as := m.params["as"]
		if as == "" {
			return outputObject, nil
		}
		if m.params["g"] != "meta.k8s.io" || (m.params["v"] != "v1" && m.params["v"] != "v1beta1") {
			continue
		}
		switch as {
		case "Table":
			return outputTable, nil
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			return outputPartial, nil
		}
	}
	return outputObject, statusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("only the following media types are accepted: application/json, application/yaml, application/json;as=Table;g=meta.k8s.io;v=v1 (the request asked for %q)", accept))
}

// acceptsYAMLOnly says whether the client asked for YAML before JSON.
func acceptsYAMLOnly(r *http.Request) bool {
	for _, m := range parseAccept(r.Header.Get("Accept")) {
		switch m.typ {
		case "application/yaml":
			return true
		case "application/json", "*/*", "application/*":
			return false
		}
	}
	return false
}
