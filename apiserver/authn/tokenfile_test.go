package authn

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestParseTokenFile(t *testing.T) {
	content := `# strata static tokens
abc123,admin,uid-1,"system:masters,ops"

tok2,alice,uid-2
tok3,bob,uid-3,"dev, qa ,"
tok4,carol,,
`
	path := filepath.Join(t.TempDir(), "tokens.csv")
	os.WriteFile(path, []byte(content), 0o600)
	got, err := ParseTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]user.Info{
		"abc123": &user.DefaultInfo{Name: "admin", UID: "uid-1", Groups: []string{"system:masters", "ops"}},
		"tok2":   &user.DefaultInfo{Name: "alice", UID: "uid-2"},
		"tok3":   &user.DefaultInfo{Name: "bob", UID: "uid-3", Groups: []string{"dev", "qa"}},
		"tok4":   &user.DefaultInfo{Name: "carol"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestParseTokenFileErrors(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{name: "two fields", content: "# c\ntok,alice\n", want: "line 2: want at least 3 fields (token,user,uid), found 2"},
		{name: "one field", content: "tok\n", want: "line 1: want at least 3 fields"},
		{name: "empty token", content: "ok,a,1\n\n,bob,2\n", want: "line 3: empty token"},
		{name: "duplicate token", content: "t1,a,1\nt2,b,2\nt1,c,3\n", want: "line 3: duplicate token (first on line 1)"},
		{name: "empty user", content: "t1,,1\n", want: "line 1: empty user name"},
		{name: "token with space", content: "t 1,a,1\n", want: "line 1: token contains white space"},
		{name: "bad quoting", content: "t1,a,1\nt2,b,2,\"g1\n", want: "parse error on line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.csv")
			os.WriteFile(path, []byte(tt.content), 0o600)
			_, err := ParseTokenFile(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, path, tt.want)
			}
		})
	}
	if _, err := ParseTokenFile(filepath.Join(t.TempDir(), "missing.csv")); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}
