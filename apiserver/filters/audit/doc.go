// Package audit records requests in kube-apiserver's audit log: the
// policy file format (audit.k8s.io/v1 Policy: levels None, Metadata,
// Request, RequestResponse; omitStages; omitManagedFields), the events and
// their stages, and the log backend's JSON lines (or the legacy one-line
// format), all from k8s.io/apiserver's audit packages and filters.
//
// Auditor plugs three filters into the chain where kube-apiserver has
// them: Init, outermost, gives every request its audit ID (the Audit-Id
// response header, also when nothing is logged); Audit, just inside
// authentication, evaluates the policy for the authenticated user and
// writes the request's events; FailedAuthentication wraps the 401 answer,
// so that refused credentials are logged too.
//
// kube-apiserver's handlers hand the audit event the objects they decode
// and encode. strata's handlers do not: Audit takes the request and
// response bodies as they cross the wire instead (capture.go). The
// difference is visible only at levels Request and RequestResponse: a
// request object is the body the client sent (YAML converted to JSON), not
// the decoded object re-encoded, so it lacks fields the decoder would have
// added (a null creationTimestamp); protobuf bodies are not logged as
// objects; bodies beyond MaxObjectBytes are left out.
package audit
