package pki

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	token, err := EnsureToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := hex.DecodeString(token); err != nil || len(raw) != 32 {
		t.Errorf("token %q is not 32 bytes of hex", token)
	}
	file := filepath.Join(dir, "admin.token")
	if m := mode(t, file); m != 0o600 {
		t.Errorf("admin.token has mode %o, want 600", m)
	}
	again, err := EnsureToken(dir)
	if err != nil || again != token {
		t.Errorf("second call returned %q, %v; want the first token", again, err)
	}
	other, err := EnsureToken(t.TempDir())
	if err != nil || other == token {
		t.Errorf("another directory returned %q, %v; want a new token", other, err)
	}
}

func TestEnsureTokenFileEdited(t *testing.T) {
	tests := []struct {
		content, want, wantErr string
	}{
		{content: "my-token\n", want: "my-token"},
		{content: "  spaced-out \n\n", want: "spaced-out"},
		{content: "", wantErr: "non-empty"},
		{content: "two words", wantErr: "non-empty"},
		{content: "a,b", wantErr: "commas"},
	}
	for _, tt := range tests {
		t.Run(tt.content, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "admin.token"), []byte(tt.content), 0o600)
			got, err := EnsureToken(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "admin.token") {
					t.Fatalf("error %v, want one naming admin.token and containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
