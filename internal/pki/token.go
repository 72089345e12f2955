package pki

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratadev/strata/internal/atomicfile"
)

const tokenName = "admin.token"

// EnsureToken returns the admin bearer token kept in dir/admin.token,
// creating it (32 random bytes, hex-encoded, mode 0600) on the first call.
// A token file edited by hand is accepted if it is one non-empty line
// without spaces or commas (it must fit a token-auth-file line).
func EnsureToken(dir string) (string, error) {
	file := filepath.Join(dir, tokenName)
	data, err := os.ReadFile(file)
	if err == nil {
		token := strings.TrimSpace(string(data))
		if token == "" || strings.ContainsAny(token, " \t\r\n,\"") {
			return "", fmt.Errorf("%s: token must be one non-empty word without spaces, commas or quotes", file)
		}
		return token, nil
	}
	if !os.IsNotExist(err) {
		return "", fmt.Errorf("reading admin token: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating data directory: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generating admin token: %w", err)
	}
	token := hex.EncodeToString(raw)
	if err := atomicfile.Write(file, []byte(token+"\n"), 0o600); err != nil {
		return "", err
	}
	return token, nil
}
