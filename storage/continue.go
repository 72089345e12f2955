package storage

import "github.com/stratadev/strata/internal/continuetoken"

// continueToken is a list's decoded metadata.continue (package
// continuetoken: kube-apiserver's format).
type continueToken = continuetoken.Token

// inconsistentRV is the revision of the token handed out with 410 Expired
// when the first page's revision was compacted: it continues from its key
// at the newest revision.
const inconsistentRV = continuetoken.Inconsistent

func encodeContinue(rv int64, start string) string { return continuetoken.Encode(rv, start) }

// decodeContinue parses a token; anything malformed is ErrBadRequest with
// kube-apiserver's message ("invalid continue token: continue key is not
// valid: ...").
func decodeContinue(s string) (continueToken, error) {
	t, err := continuetoken.Decode(s)
	if err != nil {
		return continueToken{}, badRequest("invalid continue token: %v", err)
	}
	return t, nil
}
