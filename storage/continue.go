package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueVersion versions the continue token format: kube-apiserver's own
// (k8s.io/apiserver/pkg/storage/continue.go), so that tokens and the errors
// for bad ones read as kube-apiserver's.
const continueVersion = "meta.k8s.io/v1"

// continueToken is the decoded form of a list's metadata.continue.
//
// A token is base64url (unpadded) of JSON {"v":"meta.k8s.io/v1","rv":R,"start":S}.
// R is the revision every page is read at (the first page's); S is the key,
// relative to the list's prefix, from which the next page starts: the last
// returned key plus "\x00", so the next range begins just after it.
//
// Example: a list of /registry/pods/ with limit 2 over keys a/x, a/y, b/z at
// revision 7 returns a/x and a/y and the token {rv:7, start:"a/y\x00"}; the
// next request reads [/registry/pods/a/y\x00, /registry/pods0) at revision
// 7 and returns b/z, even if b/w was created at revision 8.
//
// R = -1 marks an "inconsistent" token, handed out with 410 Expired when R
// was compacted: it continues from S at the newest revision.
type continueToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
}

// inconsistentRV is the revision of an inconsistent token.
const inconsistentRV = -1

func encodeContinue(rv int64, start string) string {
	data, _ := json.Marshal(continueToken{Version: continueVersion, RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(data)
}

// errInvalidContinue begins every complaint about a token, in
// kube-apiserver's words.
var errInvalidContinue = errors.New("continue key is not valid")

// decodeContinue parses a token; anything malformed is ErrBadRequest with
// kube-apiserver's message ("invalid continue token: continue key is not
// valid: ...").
func decodeContinue(s string) (continueToken, error) {
	t, err := parseContinue(s)
	if err != nil {
		return continueToken{}, badRequest("invalid continue token: %v", err)
	}
	return t, nil
}

func parseContinue(s string) (continueToken, error) {
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return continueToken{}, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	var t continueToken
	if err := json.Unmarshal(data, &t); err != nil {
		return continueToken{}, fmt.Errorf("%w: %v", errInvalidContinue, err)
	}
	switch {
	case t.Version != continueVersion:
		return continueToken{}, fmt.Errorf("%w: server does not recognize this encoded version %v", errInvalidContinue, t.Version)
	case t.RV == 0:
		return continueToken{}, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", errInvalidContinue, continueVersion)
	case t.Start == "":
		return continueToken{}, fmt.Errorf("%w: encoded start key empty (version %s)", errInvalidContinue, continueVersion)
	}
	// The start key may not climb out of the list's prefix ("../").
	key := "/" + strings.TrimPrefix(t.Start, "/")
	if path.Clean(key) != key {
		return continueToken{}, fmt.Errorf("%w: %v", errInvalidContinue, t.Start)
	}
	t.Start = key[1:]
	if t.RV < 0 {
		t.RV = inconsistentRV
	}
	return t, nil
}
