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

// makeCredentials makes, beside etcd's start, the credentials a first
// start generates in the data directory: the admin token, the CA and
// serving certificate, the service-account signing key (generating the
// keys takes 0.1 to 0.5 s of CPU; etcd's start is mostly disk). startAPI's
// own calls then find them; they repeat any error made here, which is why
// it is dropped. Call it only with the data directory locked (two
// processes would make different keys), and the returned wait before
// going on, whatever happened, so that nothing writes into the directory
// afterwards.
func makeCredentials(o *Options) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = pki.EnsureToken(o.pkiDir())
		if !o.PlainHTTP && o.TLSCertFile == "" {
			_, _ = pki.EnsureServing(o.pkiDir(), servingHosts(o.BindAddress))
		}
		if o.ServiceAccounts.SigningKeyFile == "" {
			_, _ = pki.EnsureServiceAccountKey(o.pkiDir())
		}
	}()
	return func() { <-done }
}
