package e2e

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestKubectlCreateToken: with both kubectls, `kubectl create token` gives
// a token that authenticates as the service account (the server's request
// log names it), kubectl prints kube-apiserver's refusals, and the token
// stops working once the account is deleted.
func TestKubectlCreateToken(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	// At debug level the server logs each request's line, with its user.
	srv := startServer(t, dataDir, "--log-level", "debug")
	for _, kind := range kubectls {
		t.Run(kind.name, func(t *testing.T) {
			k := kind.new(t, dataDir)
			sa := "robot-" + kind.name
			k.exact(t, "serviceaccount/"+sa+" created\n", "create", "serviceaccount", sa)
			tok := strings.TrimSpace(k.ok(t, "create", "token", sa, "--duration", "20m", "--audience", "https://kubernetes.default.svc.cluster.local"))
			claims := jwtClaims(t, tok)
			if claims.Sub != "system:serviceaccount:default:"+sa || claims.Iss != "https://kubernetes.default.svc.cluster.local" ||
				claims.Exp-claims.Iat != 1200 || claims.Kubernetes.Namespace != "default" || claims.Kubernetes.ServiceAccount.Name != sa {
				t.Errorf("token claims %+v", claims)
			}
			k.exact(t, "system:serviceaccount:default:"+sa, "--token", tok, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
			if line := "user=system:serviceaccount:default:" + sa + " "; !strings.Contains(srv.log.String(), line) {
				t.Errorf("the server logged no request with %q", line)
			}

			for _, tt := range []struct{ args, stderr string }{
				{args: "create token " + sa + " --duration 5m",
					stderr: `error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes` + "\n"},
				{args: "create token nobody", stderr: `error: failed to create token: serviceaccounts "nobody" not found` + "\n"},
			} {
				r := k.run(t, strings.Fields(tt.args)...)
				if r.code != 1 || r.stdout != "" || r.stderr != tt.stderr {
					t.Errorf("want exit 1 and stderr %q\n%v", tt.stderr, r)
				}
			}

			k.exact(t, "serviceaccount \""+sa+"\" deleted from default namespace\n", "delete", "serviceaccount", sa)
			const refused = "error: You must be logged in to the server (Unauthorized)\n"
			deadline := time.Now().Add(30 * time.Second)
			for {
				r := k.run(t, "--token", tok, "get", "serviceaccount", "default", "-o", "name")
				if r.code == 1 && r.stderr == refused {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the token of a deleted account: want exit 1 and stderr %q\n%v", refused, r)
				}
			}
		})
	}
}

// tokenClaims are the claims of a service-account token the test reads.
type tokenClaims struct {
	Iss, Sub   string
	Exp, Iat   int64
	Kubernetes struct {
		Namespace      string
		ServiceAccount struct{ Name, UID string } `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

// jwtClaims decodes the payload of a JWT without checking its signature.
func jwtClaims(t *testing.T, tok string) tokenClaims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", tok)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c tokenClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatalf("claims %s: %v", payload, err)
	}
	return c
}
