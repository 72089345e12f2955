package authn

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"

	"k8s.io/apiserver/pkg/endpoints/request"
)

// unauthorizedBody is what kube-apiserver answers a request it cannot
// authenticate: the JSON of metav1.Status{Kind: "Status", APIVersion: "v1",
// Status: "Failure", Message: "Unauthorized", Reason: "Unauthorized",
// Code: 401}, as its serializer writes it (with a final newline).
const unauthorizedBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

// Middleware passes requests a authenticates to next, with the user in the
// context (request.UserFrom), and answers the others 401 with
// kube-apiserver's Status. The Authorization header of a request
// authenticated by its token is removed before next sees it.
func Middleware(a *Authenticator, next http.Handler) http.Handler {
	var refuse http.Handler = http.HandlerFunc(unauthorized)
	if a.Refused != nil {
		refuse = a.Refused(refuse)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, byToken := a.authenticate(r)
		if !ok {
			refuse.ServeHTTP(w, r)
			return
		}
		r = r.WithContext(request.WithUser(r.Context(), u))
		if byToken {
			// So that nothing behind the middleware is tempted to use it.
			// As kube-apiserver's WithAuthentication, it goes from the
			// request's own headers: the filters before this one have read
			// what they need of them.
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if r.ProtoMajor == 2 {
		// As kube-apiserver does (CVE-2023-44487): an unauthenticated
		// client does not keep an HTTP/2 connection; Go's server answers
		// this header with GOAWAY.
		h.Set("Connection", "close")
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, unauthorizedBody)
}

// ClientAuthTLS makes a server's TLS configuration ask clients for a
// certificate that pool signed. Like kube-apiserver it requests a
// certificate but leaves checking it to the Authenticator
// (tls.RequestClientCert rather than tls.VerifyClientCertIfGiven): a client
// with no certificate, or with one from another CA, still completes the
// handshake, and gets 401, or is authenticated by its bearer token.
// ClientCAs is set so the server names the CAs it accepts.
func ClientAuthTLS(cfg *tls.Config, pool *x509.CertPool) {
	cfg.ClientAuth = tls.RequestClientCert
	cfg.ClientCAs = pool
}
