package storage

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// continueVersion versions the continue token format.
const continueVersion = "strata.dev/v1"

// continueToken is the decoded form of a list's metadata.continue.
//
// A token is base64url (unpadded) of JSON {"v":"strata.dev/v1","rv":R,"start":S}.
// R is the revision every page is read at (the first page's); S is the key,
// relative to the list's prefix, from which the next page starts: the last
// returned key plus "\x00", so the next range begins just after it.
//
// Example: a list of /registry/pods/ with limit 2 over keys a/x, a/y, b/z at
// revision 7 returns a/x and a/y and the token {rv:7, start:"a/y\x00"}; the
// next request reads [/registry/pods/a/y\x00, /registry/pods0) at revision
// 7 and returns b/z, even if b/w was created at revision 8.
//
// R = 0 marks an "inconsistent" token, handed out with 410 Expired when R was
// compacted: it continues from S at the newest revision.
type continueToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
}

func encodeContinue(rv int64, start string) string {
	data, _ := json.Marshal(continueToken{Version: continueVersion, RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(data)
}

// decodeContinue parses a token; anything malformed is ErrBadRequest.
func decodeContinue(s string) (continueToken, error) {
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return continueToken{}, badRequest("invalid continue token %q: not base64url: %v", s, err)
	}
	var t continueToken
	if err := json.Unmarshal(data, &t); err != nil {
		return continueToken{}, badRequest("invalid continue token %q: %v", s, err)
	}
	switch {
	case t.Version != continueVersion:
		return continueToken{}, badRequest("invalid continue token %q: version %q, want %q", s, t.Version, continueVersion)
	case t.RV < 0:
		return continueToken{}, badRequest("invalid continue token %q: negative revision %d", s, t.RV)
	case t.Start == "" || strings.HasPrefix(t.Start, "/"):
		return continueToken{}, badRequest("invalid continue token %q: start key %q must be a non-empty relative key", s, t.Start)
	}
	return t, nil
}
