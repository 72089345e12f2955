package apiserver

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	authenticationapi "k8s.io/kubernetes/pkg/apis/authentication"
	"k8s.io/utils/ptr"
)

// stubTokens records what serviceaccounts/token hands TokenREST and
// answers with a fixed token.
type stubTokens struct {
	namespace, name string
	req             *authenticationapi.TokenRequest
	dryRun          []string
}

func (s *stubTokens) New() runtime.Object { return &authenticationapi.TokenRequest{} }

func (s *stubTokens) Create(ctx context.Context, name string, obj runtime.Object, _ rest.ValidateObjectFunc,
	opts *metav1.CreateOptions) (runtime.Object, error) {
	s.namespace, s.name = genericapirequest.NamespaceValue(ctx), name
	s.req, s.dryRun = obj.(*authenticationapi.TokenRequest), opts.DryRun
	warning.AddWarning(ctx, "", "requested expiration of 7200 seconds shortened to 3600 seconds")
	out := s.req.DeepCopy()
	out.Status.Token = "signed"
	return out, nil
}

// TestTokenRequestEdge: serviceaccounts/token as kube-apiserver's create
// handler serves TokenREST: the body decoded (JSON or protobuf) and
// defaulted, the namespace and name from the URL, TokenREST's warnings as
// headers, 201 with the TokenRequest; other verbs 405; 404 without a
// TokenREST.
func TestTokenRequestEdge(t *testing.T) {
	stub := &stubTokens{}
	ts := newTestServer(t, func(c *Config) { c.TokenRequest = stub })
	for _, tt := range []struct{ name string }{{name: "json"}, {name: "protobuf"}} {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := jsonClient(t, ts)
			if tt.name == "protobuf" {
				client, _ = protobufClient(t, ts)
			}
			*stub = stubTokens{}
			out, err := client.CoreV1().ServiceAccounts("default").CreateToken(context.Background(), "robot",
				&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatal(err)
			}
			if stub.namespace != "default" || stub.name != "robot" || !cmp.Equal(stub.dryRun, []string{"All"}) {
				t.Errorf("TokenREST got %s/%s dryRun %v", stub.namespace, stub.name, stub.dryRun)
			}
			want := authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, ExpirationSeconds: ptr.To[int64](3600)}
			if diff := cmp.Diff(want, out.Spec); diff != "" || out.Status.Token != "signed" {
				t.Errorf("token %q, spec (-want +got):\n%s", out.Status.Token, diff)
			}
		})
	}

	for _, tt := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{method: http.MethodGet, path: "/api/v1/namespaces/default/serviceaccounts/robot/token", code: 405,
			want: "the server does not allow this method on the requested resource"},
		{method: http.MethodPost, path: "/api/v1/namespaces/default/serviceaccounts/robot/token", code: 201,
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`,
			want: `{"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1","metadata":{},"spec":{"audiences":null,"expirationSeconds":3600,"boundObjectRef":null},"status":{"token":"signed","expirationTimestamp":null}}`},
		{method: http.MethodPost, path: "/api/v1/namespaces/default/serviceaccounts/robot/token", code: 400,
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","metadata":{"namespace":"other"}}`,
			want: "the namespace of the provided object does not match the namespace sent on the request"},
	} {
		code, header, body := rawRequest(t, ts, tt.method, tt.path, tt.body)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s %s: %d %s\nwant %d containing %s", tt.method, tt.path, code, body, tt.code, tt.want)
		}
		if tt.code == 201 && header.Get("Warning") != `299 - "requested expiration of 7200 seconds shortened to 3600 seconds"` {
			t.Errorf("Warning header %q", header.Get("Warning"))
		}
	}

	code, _, body := rawRequest(t, newTestServer(t), http.MethodPost, "/api/v1/namespaces/default/serviceaccounts/robot/token", `{}`)
	if code != 404 {
		t.Errorf("without a TokenREST: %d %s, want 404", code, body)
	}
}

func rawRequest(t *testing.T, ts *testServer, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, strings.TrimSpace(string(data))
}
