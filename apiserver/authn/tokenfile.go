package authn

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
)

// ParseTokenFile reads a static token file in kube-apiserver's
// --token-auth-file format, one user per line:
//
//	token,user,uid[,"group1,group2"]
//
// Blank lines and lines starting with '#' are skipped. Unlike
// kube-apiserver, which logs a warning and goes on, an empty or duplicate
// token is an error; so is an empty user name or a token with white space
// (no Authorization header could carry it). Group names are trimmed of
// spaces, and empty ones dropped.
func ParseTokenFile(path string) (map[string]user.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	return parseTokens(path, f)
}

func parseTokens(path string, in io.Reader) (map[string]user.Info, error) {
	r := csv.NewReader(in)
	r.FieldsPerRecord = -1
	r.Comment = '#'
	tokens := map[string]user.Info{}
	lineOf := map[string]int{}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			return tokens, nil
		}
		if err != nil {
			// csv.ParseError already names the line and column.
			return nil, fmt.Errorf("token file %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("token file %s, line %d: %s", path, line, fmt.Sprintf(format, args...))
		}
		if len(record) < 3 {
			return nil, fail("want at least 3 fields (token,user,uid), found %d", len(record))
		}
		token, name, uid := record[0], record[1], record[2]
		switch {
		case token == "":
			return nil, fail("empty token")
		case strings.ContainsAny(token, " \t\r\n"):
			return nil, fail("token contains white space")
		case name == "":
			return nil, fail("empty user name")
		}
		if first, dup := lineOf[token]; dup {
			return nil, fail("duplicate token (first on line %d)", first)
		}
		u := &user.DefaultInfo{Name: name, UID: uid}
		if len(record) > 3 {
			for _, g := range strings.Split(record[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		tokens[token] = u
		lineOf[token] = line
	}
}
