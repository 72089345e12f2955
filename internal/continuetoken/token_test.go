package continuetoken

import (
	"encoding/base64"
	"errors"
	"testing"
)

// TestDecode: tokens round-trip, and bad ones are refused with
// kube-apiserver's messages (k8s.io/apiserver/pkg/storage.DecodeContinue).
func TestDecode(t *testing.T) {
	raw := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tt := range []struct {
		name, token, wantErr string
		want                 Token
	}{
		{name: "round trip", token: Encode(7, "a/y\x00"),
			want: Token{Version: Version, RV: 7, Start: "a/y\x00"}},
		{name: "inconsistent", token: Encode(Inconsistent, "b"),
			want: Token{Version: Version, RV: -1, Start: "b"}},
		{name: "a leading slash is the same key", token: raw(`{"v":"meta.k8s.io/v1","rv":3,"start":"/a"}`),
			want: Token{Version: Version, RV: 3, Start: "a"}},
		{name: "not base64", token: "%%%",
			wantErr: "continue key is not valid: illegal base64 data at input byte 0"},
		{name: "not JSON", token: raw("not json"),
			wantErr: "continue key is not valid: invalid character 'o' in literal null (expecting 'u')"},
		{name: "another version", token: raw(`{"v":"strata.dev/v1","rv":3,"start":"x"}`),
			wantErr: "continue key is not valid: server does not recognize this encoded version strata.dev/v1"},
		{name: "revision 0", token: raw(`{"v":"meta.k8s.io/v1","rv":0,"start":"x"}`),
			wantErr: "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{name: "no start key", token: raw(`{"v":"meta.k8s.io/v1","rv":3}`),
			wantErr: "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{name: "out of the prefix", token: raw(`{"v":"meta.k8s.io/v1","rv":3,"start":"../secrets/x"}`),
			wantErr: "continue key is not valid: ../secrets/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.token)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// FuzzDecode: any token decodes to a key inside the prefix or to
// ErrInvalid, and what decodes encodes back to the same token.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(7, "a/y\x00"))
	f.Add(Encode(Inconsistent, "b"))
	f.Add("%%%")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":3,"start":"../x"}`)))
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := Decode(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v is not ErrInvalid", s, err)
			}
			return
		}
		if tok.Start == "" || tok.Start[0] == '/' || tok.RV == 0 {
			t.Fatalf("%q decoded to %+v", s, tok)
		}
		again, err := Decode(Encode(tok.RV, tok.Start))
		if err != nil || again != tok {
			t.Fatalf("%q: %+v re-encoded decodes to %+v, %v", s, tok, again, err)
		}
	})
}
