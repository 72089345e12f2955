// Package continuetoken encodes and decodes the continue tokens of
// paginated lists in kube-apiserver's format
// (k8s.io/apiserver/pkg/storage/continue.go), so that tokens and the errors
// for bad ones read as kube-apiserver's. It is a package of its own so that
// its fuzz target builds without the storage layer's etcd.
package continuetoken

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Version versions the token format: kube-apiserver's own.
const Version = "meta.k8s.io/v1"

// Token is the decoded form of a list's metadata.continue.
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
type Token struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
}

// Inconsistent is the revision of an inconsistent token.
const Inconsistent = -1

// Encode is the token of a page read at revision rv whose next page starts
// at the key start, relative to the list's prefix.
func Encode(rv int64, start string) string {
	data, _ := json.Marshal(Token{Version: Version, RV: rv, Start: start})
	return base64.RawURLEncoding.EncodeToString(data)
}

// ErrInvalid begins every complaint about a token, in kube-apiserver's
// words.
var ErrInvalid = errors.New("continue key is not valid")

// Decode parses a token; anything malformed is an error wrapping ErrInvalid
// with kube-apiserver's message ("continue key is not valid: ...").
func Decode(s string) (Token, error) {
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var t Token
	if err := json.Unmarshal(data, &t); err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch {
	case t.Version != Version:
		return Token{}, fmt.Errorf("%w: server does not recognize this encoded version %v", ErrInvalid, t.Version)
	case t.RV == 0:
		return Token{}, fmt.Errorf("%w: incorrect encoded start resourceVersion (version %s)", ErrInvalid, Version)
	case t.Start == "":
		return Token{}, fmt.Errorf("%w: encoded start key empty (version %s)", ErrInvalid, Version)
	}
	// The start key may not climb out of the list's prefix ("../").
	key := "/" + strings.TrimPrefix(t.Start, "/")
	if path.Clean(key) != key {
		return Token{}, fmt.Errorf("%w: %v", ErrInvalid, t.Start)
	}
	t.Start = key[1:]
	if t.RV < 0 {
		t.RV = Inconsistent
	}
	return t, nil
}
