// Package authn answers who is asking: a bearer token from a
// kube-apiserver --token-auth-file style file, or a client certificate
// signed by the client CA. It follows kube-apiserver's authentication chain:
//
//   - a client certificate is tried first, then the bearer token; the first
//     that succeeds names the user;
//   - credentials that are present but wrong (an unknown token, a
//     certificate another CA signed) fail the request with 401, even where
//     anonymous requests are allowed;
//   - a request with no credentials (no Authorization header, a Basic one,
//     "Bearer" without a token) is anonymous: it passes as system:anonymous
//     where Authenticator.Anonymous allows, and gets 401 elsewhere;
//   - authenticated users are also members of system:authenticated, and the
//     Authorization header of a request authenticated by its token is
//     removed before the request goes on.
//
// A 401 is the Status kube-apiserver writes, byte for byte.
package authn
