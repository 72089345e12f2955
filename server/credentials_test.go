package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stratadev/strata/internal/pki"
)

// TestLogNewCredentials: a start that makes the admin token and the CA
// says so, once per file; a start that finds them says nothing.
func TestLogNewCredentials(t *testing.T) {
	o := NewOptions()
	o.DataDir = t.TempDir()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	for start := range 2 {
		buf.Reset()
		before := credentialFiles(o)
		if _, err := pki.EnsureToken(o.pkiDir()); err != nil {
			t.Fatal(err)
		}
		if _, err := pki.EnsureServing(o.pkiDir(), []string{"127.0.0.1"}); err != nil {
			t.Fatal(err)
		}
		logNewCredentials(log, before, credentialFiles(o))
		lines := strings.Count(buf.String(), "made a new credential")
		if want := []int{2, 0}[start]; lines != want {
			t.Errorf("start %d: %d lines, want %d:\n%s", start+1, lines, want, buf.String())
		}
	}
}
