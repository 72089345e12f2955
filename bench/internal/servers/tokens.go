package servers

import (
	"fmt"
	"os"
)

// The token file every server the bench starts reads
// (--token-auth-file): the RBAC cells' user, not in system:masters, and an
// admin in system:masters for kube-apiserver (strata's clients use the
// admin token of strata's kubeconfig).
const (
	User       = "bench-user"
	UserToken  = "bench-user-token-7f3a"
	Admin      = "bench-admin"
	AdminToken = "bench-admin-token-41c9"
)

// WriteTokens writes the token file at path.
func WriteTokens(path string) error {
	lines := UserToken + "," + User + ",uid-bench\n" +
		AdminToken + "," + Admin + ",uid-admin,\"system:masters\"\n"
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		return fmt.Errorf("servers: token file: %w", err)
	}
	return nil
}
