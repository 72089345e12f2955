package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The user of TestKubectlAuth's --token-auth-file.
const (
	authUserToken = "auth-user-token"
	authUserName  = "carol"
)

// TestKubectlAuth runs kubectl auth whoami and can-i, with both kubectls,
// as the admin (system:masters) and as a --token-auth-file user. Each
// answer asserted here is kube-apiserver's under the default
// authorization, which today allows every authenticated user everything,
// and under RBAC alike; the cases that differ are marked.
func TestKubectlAuth(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(authUserToken+","+authUserName+",uid-carol,\"dev\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, t.TempDir(), "--token-auth-file", tokenFile)
	for _, kind := range kubectls {
		t.Run(kind.name, func(t *testing.T) {
			k := kind.new(t, srv.dataDir)
			t.Run("whoami", func(t *testing.T) {
				k.exact(t, "ATTRIBUTE   VALUE\nUsername    strata-admin\nGroups      [system:masters system:authenticated]\n",
					"auth", "whoami")
			})
			t.Run("whoami-json", func(t *testing.T) { testWhoamiJSON(t, k) })
			t.Run("whoami-as", func(t *testing.T) {
				k.exact(t, "ATTRIBUTE     VALUE\nUsername      someone\nGroups        [staff system:authenticated]\nExtra: team   [blue]\n",
					"auth", "whoami", "--as=someone", "--as-group=staff", "--as-user-extra=team=blue")
			})
			t.Run("can-i", func(t *testing.T) {
				k.exact(t, "yes\n", "auth", "can-i", "create", "pods")
				k.exact(t, "yes\n", "auth", "can-i", "delete", "nodes", "--all-namespaces")
				k.exact(t, "yes\n", "auth", "can-i", "get", "/healthz")
			})
			t.Run("can-i-as", func(t *testing.T) {
				// The admin impersonating the admin: allowed by the legacy
				// "impersonate" verb (constrained impersonation refuses
				// system:masters), then allowed to create pods.
				k.exact(t, "yes\n", "auth", "can-i", "create", "pods", "--as=strata-admin", "--as-group=system:masters")
			})
			t.Run("can-i-list", func(t *testing.T) { testCanIList(t, k) })
			t.Run("token-file-user", func(t *testing.T) {
				k.exact(t, "ATTRIBUTE   VALUE\nUsername    carol\nUID         uid-carol\nGroups      [dev system:authenticated]\n",
					"auth", "whoami", "--token="+authUserToken)
				// Under RBAC (the default) carol has no binding: she may not
				// create pods nor impersonate, and the user "someone" the
				// admin impersonates may not create pods either.
				for _, args := range [][]string{
					{"auth", "can-i", "create", "pods", "--token=" + authUserToken},
					{"auth", "can-i", "create", "pods", "--as=someone"},
				} {
					if r := k.run(t, args...); r.code != 1 || r.stdout != "no\n" {
						t.Errorf("%s: want \"no\" and exit status 1\n%v", k.name, r)
					}
				}
				k.exact(t, "yes\n", "auth", "can-i", "create", "selfsubjectaccessreviews.authorization.k8s.io", "--all-namespaces", "--token="+authUserToken)
				r := k.run(t, "get", "pods", "--token="+authUserToken, "--as=someone")
				if r.code != 1 || !strings.Contains(r.stderr, `User "carol" cannot impersonate`) {
					t.Errorf("%s: carol impersonating: want exit status 1 and a 403 naming carol\n%v", k.name, r)
				}
			})
		})
	}
}

// testWhoamiJSON: -o json is the SelfSubjectReview the server answered.
func testWhoamiJSON(t *testing.T, k *kubectl) {
	out := k.ok(t, "auth", "whoami", "-o", "json")
	var review struct {
		APIVersion, Kind string
		Metadata         struct{ CreationTimestamp string }
		Status           struct {
			UserInfo struct {
				Username string
				Groups   []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &review); err != nil {
		t.Fatalf("%s: %v\n%s", k.name, err, out)
	}
	ui := review.Status.UserInfo
	if review.APIVersion != "authentication.k8s.io/v1" || review.Kind != "SelfSubjectReview" || review.Metadata.CreationTimestamp == "" ||
		ui.Username != "strata-admin" || !slices.Equal(ui.Groups, []string{"system:masters", "system:authenticated"}) {
		t.Errorf("%s: auth whoami -o json:\n%s", k.name, out)
	}
}

// testCanIList: the admin may do everything. Under RBAC the list also has
// the rules every authenticated user gets (system:basic-user, ...), so
// only the rows of everything are required.
func testCanIList(t *testing.T, k *kubectl) {
	out := k.ok(t, "auth", "can-i", "--list")
	rows := table(out)
	if len(rows) == 0 || !slices.Equal(rows[0], []string{"Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"}) {
		t.Fatalf("%s: auth can-i --list header:\n%s", k.name, out)
	}
	for _, want := range [][]string{{"*.*", "[]", "[]", "[*]"}, {"[*]", "[]", "[*]"}} {
		if !slices.ContainsFunc(rows[1:], func(r []string) bool { return slices.Equal(r, want) }) {
			t.Errorf("%s: auth can-i --list has no row %s:\n%s", k.name, strings.Join(want, " "), out)
		}
	}
}
