package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratadev/strata/admission"
	"github.com/stratadev/strata/controllers"
	"github.com/stratadev/strata/internal/cli"
	"github.com/stratadev/strata/server"
)

func newServerCommand() *cobra.Command {
	o := server.NewOptions()
	o.DataDir = dataDir(os.Getenv) // $STRATA_DATA_DIR, as strata kubectl reads it
	var logLevel string
	cmd := &cobra.Command{
		Use:           "strata-server",
		Short:         "Run a Kubernetes-compatible API server on an embedded (or external) etcd",
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `Run a Kubernetes-compatible API server. With no flags it keeps everything in
./strata-data (or $STRATA_DATA_DIR): an embedded etcd, a self-signed CA and serving certificate, an
admin token and a kubeconfig (./strata-data/kubeconfig) that kubectl and
"strata kubectl" use. It serves HTTPS on 127.0.0.1:6443 and stops gracefully on
SIGINT or SIGTERM.

"strata server" runs this program, strata-server, and "strata kubectl" runs
"strata-server kubectl".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServer(cmd, o, logLevel) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError{Err: err} })
	cmd.AddCommand(newKubectlCommand())
	serverFlags(cmd.Flags(), o, &logLevel)
	return cmd
}

// serverFlags are strata server's flags, which strata-server also takes
// when it runs as kube-apiserver.
func serverFlags(f *pflag.FlagSet, o *server.Options, logLevel *string) {
	f.StringVar(&o.DataDir, "data-dir", o.DataDir, "directory for etcd data, certificates, the admin token and the kubeconfig")
	f.StringSliceVar(&o.EtcdServers, "etcd-servers", nil, "external etcd client URLs (no embedded etcd runs)")
	f.StringVar(&o.EtcdCAFile, "etcd-cafile", "", "CA bundle to verify external etcd servers")
	f.StringVar(&o.EtcdCertFile, "etcd-certfile", "", "client certificate for external etcd")
	f.StringVar(&o.EtcdKeyFile, "etcd-keyfile", "", "client key for external etcd")
	f.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "IP address to serve on")
	f.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "port to serve HTTPS on (0: any free port)")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serving certificate (default: generated in the data directory)")
	f.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", "", "private key of --tls-cert-file")
	f.StringVar(&o.TokenAuthFile, "token-auth-file", "", "bearer tokens, one per line: token,user,uid,\"group1,group2\"")
	f.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA whose client certificates authenticate (CN user, O groups)")
	f.StringSliceVar(&o.AuthorizationModes, "authorization-mode", o.AuthorizationModes, "ordered list of authorizers, comma-separated: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node (system:masters is always allowed)")
	f.StringVar(&o.AuthorizationPolicyFile, "authorization-policy-file", "", "ABAC policy, one JSON object a line, for --authorization-mode=ABAC")
	f.StringVar(&o.AuthorizationWebhookConfigFile, "authorization-webhook-config-file", "", "kubeconfig of the authorization webhook, for --authorization-mode=Webhook")
	f.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "let requests without credentials through as system:anonymous (group system:unauthenticated), for authorization to decide; false answers them 401")
	f.BoolVar(&o.PlainHTTP, "plain-http", false, "serve plain HTTP without TLS or authentication instead of HTTPS (loopback addresses and Host names only; writes must name a Content-Type)")
	f.BoolVar(&o.Profiling, "profiling", o.Profiling, "serve profiling through /debug/pprof/ (net/http/pprof), to users authorized for that path")
	f.StringVar(&o.PatchCompat, "patch-compat", "", "strategic merge patch behaviour: strata (default) or kubernetes (apimachinery's exactly)")
	f.Int64Var(&o.QuotaBackendBytes, "quota-backend-bytes", 0, "space quota of the embedded etcd's database, in bytes (0: etcd's default, 2 GiB); reaching it raises etcd's NOSPACE alarm, which strata clears by compacting and defragmenting")
	f.Int64Var(&o.WatchCacheSizeBytes, "watch-cache-size-bytes", 0, "bound of each resource's watch cache history, in stored bytes of its events (0: 32 MiB); watches from before the oldest event kept are answered 410 Expired")
	f.DurationVar(&o.CompactionInterval, "etcd-compaction-interval", 0, "how often to compact etcd history (default 5m; negative: never)")
	f.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "most read-only requests served at once, beyond which they are answered 429 (0: unlimited; watches not counted)")
	f.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "longest a request that is not a watch may take before it is answered 504 (0: unbounded); a shorter ?timeout= wins")
	f.IntVar(&o.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", o.MaxMutatingRequestsInFlight, "most mutating requests served at once, beyond which they are answered 429 (0: unlimited)")
	f.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "CIDR Services' cluster IPs are allocated from (the first is the kubernetes Service's)")
	f.StringVar(&o.ServiceNodePortRange, "service-node-port-range", o.ServiceNodePortRange, "port range NodePort and LoadBalancer Services' node ports are allocated from, inclusive")
	f.StringVar(&o.AdvertiseAddress, "advertise-address", "", "address the kubernetes Service's endpoints name (default: --bind-address, or the host's default address when that is loopback or unspecified)")
	f.StringVar(&o.Audit.PolicyFile, "audit-policy-file", "", "audit policy (audit.k8s.io/v1 Policy); with --audit-log-path, requests are logged as it says")
	f.StringVar(&o.Audit.LogPath, "audit-log-path", "", "file the audit events are appended to ('-': standard output)")
	f.IntVar(&o.Audit.MaxAge, "audit-log-maxage", 0, "days to keep rotated audit log files (0: no limit)")
	f.IntVar(&o.Audit.MaxBackups, "audit-log-maxbackup", 0, "rotated audit log files to keep (0: no limit)")
	f.IntVar(&o.Audit.MaxSize, "audit-log-maxsize", 0, "megabytes an audit log file may reach before it is rotated (0: never rotated)")
	f.StringVar(&o.Audit.Format, "audit-log-format", "json", "audit log format: json (an event per line) or legacy (one line of text per event)")
	f.StringSliceVar(&o.Admission.Enable, "enable-admission-plugins", nil, "admission plugins to run besides the default ones, comma-separated: kube-apiserver's names ("+admission.DefaultOn()+" run by default)")
	f.StringSliceVar(&o.Admission.Disable, "disable-admission-plugins", nil, "default admission plugins not to run, comma-separated")
	f.StringVar(&o.Admission.ConfigFile, "admission-control-config-file", "", "AdmissionConfiguration (apiserver.config.k8s.io) with the admission plugins' own configuration")
	sa := &o.ServiceAccounts
	f.StringArrayVar(&sa.Issuers, "service-account-issuer", nil, "identifier of the service-account token issuer, the tokens' \"iss\" (default "+server.DefaultServiceAccountIssuer+"); repeated: the first signs, all are accepted")
	f.StringSliceVar(&sa.APIAudiences, "api-audiences", nil, "audiences of the API: service-account tokens must name one (default: the issuers)")
	f.StringArrayVar(&sa.KeyFiles, "service-account-key-file", nil, "PEM file of public or private keys that verify service-account tokens (repeatable; the signing key always does)")
	f.StringVar(&sa.SigningKeyFile, "service-account-signing-key-file", "", "PEM private key (RSA or ECDSA) that signs service-account tokens (default: sa.key in the data directory, made at the first start)")
	f.DurationVar(&sa.MaxTokenExpiration, "service-account-max-token-expiration", 0, "longest lifetime of an issued service-account token; longer requests are shortened (0: unbounded; else 1h to 2^32s)")
	f.BoolVar(&sa.ExtendTokenExpiration, "service-account-extend-token-expiration", sa.ExtendTokenExpiration, "issue pod-bound tokens requested for 3607s for a year, as kube-apiserver's projected-token transition")
	f.StringVar(&sa.JWKSURI, "service-account-jwks-uri", "", "jwks_uri of /.well-known/openid-configuration (default: https://ADDRESS/openid/v1/jwks, ADDRESS the one served at)")
	allControllers, offControllers := controllers.AllNames()
	f.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"kube-controller-manager's controllers to run, its names and syntax: '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables it. "+
			"strata runs %s, under one leader election among the servers sharing etcd (Lease kube-system/%s); "+
			"the other names are accepted and not run (no workload controllers that create Pods, no node, volume or endpoint controllers).\nAll controllers: %s\nDisabled-by-default controllers: %s",
		strings.Join(controllers.Supported, ", "), controllers.LeaseName, strings.Join(allControllers, ", "), strings.Join(offControllers, ", ")))
	f.StringVar(logLevel, "log-level", "info", "log level: debug, info, warn or error")
}

// runServer runs the server until SIGINT or SIGTERM.
func runServer(cmd *cobra.Command, o *server.Options, logLevel string) error {
	if err := o.Validate(); err != nil {
		return cli.UsageError{Err: err}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return cli.Usagef("--log-level: %v", err)
	}
	o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	stopProfile, err := profileStart()
	if err != nil {
		return err
	}
	restoreGC := relaxGCForStart(os.Getenv)
	running, err := server.Start(ctx, o)
	stopProfile()
	restoreGC()
	if err != nil {
		return err
	}
	return running.Wait()
}
