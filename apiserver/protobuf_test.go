package apiserver

// Tests of protobuf responses: kube-apiserver's bytes for objects, lists
// and watch events, client-go's typed clients and informers over
// protobuf, and the JSON-only custom resources.

// notAcceptableMessage is kube-apiserver's 406 for a request whose Accept
// header names no media type it answers in.
const notAcceptableMessage = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
