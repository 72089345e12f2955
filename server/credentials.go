package server

import (
	"log/slog"
	"os"

	"github.com/stratadev/strata/internal/pki"
)

// credentialFiles says which of the admin token and the CA certificate
// exist in the data directory.
func credentialFiles(o *Options) map[string]bool {
	out := map[string]bool{}
	for _, f := range []string{pki.TokenFile(o.pkiDir()), pki.CAFile(o.pkiDir())} {
		_, err := os.Stat(f)
		out[f] = err == nil
	}
	return out
}

// logNewCredentials says when a start made a new admin token or CA (a
// first start, or a data directory whose files were removed): clients
// holding the old token, or trusting the old CA, stop working, and the
// operator should hear why from the server rather than from them.
func logNewCredentials(log *slog.Logger, before, after map[string]bool) {
	for f, now := range after {
		if now && !before[f] {
			log.Warn("strata server made a new credential: clients must use the kubeconfig it wrote (the old token or CA no longer works)", "file", f)
		}
	}
}
