package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/stratadev/strata/internal/cli"
)

// kubeAPIServerFlag is a kube-apiserver flag strata serves no option for.
// Given a value of ok, it is accepted silently (strata behaves so);
// otherwise it is refused when why says why, and accepted with a warning
// when why is empty (the flag tunes what a client cannot see: logging,
// caches, timing, kubelets strata does not dial).
type kubeAPIServerFlag struct {
	name string
	// bool flags may be given without a value.
	bool bool
	ok   []string
	why  string
}

// kubeAPIServerFlags are kube-apiserver v1.37's flags that strata serves no
// option for; the flags it serves are strata server's (serverFlags) and
// --cert-dir and --allow-privileged. Any other flag is an error (pflag's
// "unknown flag"). None of these is listed by --help: envtest reads
// --help to learn whether kube-apiserver still has --insecure-port.
var kubeAPIServerFlags = []kubeAPIServerFlag{
	// Logging: strata logs through --log-level.
	{name: "v"}, {name: "vmodule"}, {name: "logtostderr", bool: true}, {name: "alsologtostderr", bool: true},
	{name: "log-dir"}, {name: "log-file"}, {name: "stderrthreshold"}, {name: "log-flush-frequency"},
	{name: "logging-format", ok: []string{"text"}},
	// Caches, timing and tuning.
	{name: "event-ttl"}, {name: "enable-priority-and-fairness", bool: true}, {name: "watch-cache", bool: true},
	{name: "watch-cache-sizes"}, {name: "default-watch-cache-size"}, {name: "delete-collection-workers"},
	{name: "storage-media-type"}, {name: "shutdown-delay-duration"}, {name: "shutdown-send-retry-after", bool: true},
	{name: "shutdown-watch-termination-grace-period"}, {name: "goaway-chance"}, {name: "livez-grace-period"},
	{name: "min-request-timeout"}, {name: "http2-max-streams-per-connection"}, {name: "max-connection-bytes-per-sec"},
	{name: "apiserver-count"}, {name: "endpoint-reconciler-type"}, {name: "etcd-healthcheck-timeout"},
	{name: "etcd-readycheck-timeout"}, {name: "etcd-count-metric-poll-period"}, {name: "etcd-db-metric-poll-interval"},
	{name: "tls-min-version"}, {name: "tls-cipher-suites"}, {name: "permit-port-sharing", bool: true},
	{name: "permit-address-sharing", bool: true}, {name: "enable-logs-handler", bool: true}, {name: "external-hostname"},
	{name: "insecure-bind-address"}, {name: "enable-aggregator-routing", bool: true},
	// Kubelets: strata dials none (no nodes run Pods).
	{name: "kubelet-client-certificate"}, {name: "kubelet-client-key"}, {name: "kubelet-certificate-authority"},
	{name: "kubelet-preferred-address-types"}, {name: "kubelet-timeout"},
	// Accepted at kube-apiserver's defaults, as strata behaves.
	{name: "storage-backend", ok: []string{"etcd3"}, why: "strata stores objects in etcd3 only"},
	{name: "etcd-prefix", ok: []string{"/registry"}, why: "strata keeps objects under etcd's /registry prefix only"},
	{name: "insecure-port", ok: []string{"0"}, why: "kube-apiserver has no insecure port since v1.24; strata serves plain HTTP only with --plain-http"},
	{name: "enable-garbage-collector", bool: true, ok: []string{"true"}, why: "strata's API always serves the garbage collector's deletion propagation (run the collector with --controllers)"},
	{name: "service-account-lookup", bool: true, ok: []string{"true"}, why: "strata always checks that a service-account token's ServiceAccount and Secret exist"},
	{name: "enable-bootstrap-token-auth", bool: true, ok: []string{"false"}, why: "strata does not authenticate bootstrap tokens"},
	// Refused: they would change what clients see.
	{name: "feature-gates", why: "strata serves Kubernetes v1.37's default feature gates only"},
	{name: "runtime-config", why: "strata serves kube-apiserver's default API groups and versions only"},
	{name: "admission-control", why: "deprecated in kube-apiserver; use --enable-admission-plugins and --disable-admission-plugins"},
	{name: "encryption-provider-config", why: "strata does not encrypt objects at rest"},
	{name: "authentication-config", why: "strata authenticates by token file, client certificates and service-account tokens only"},
	{name: "authentication-token-webhook-config-file", why: "strata does not call authentication webhooks"},
	{name: "oidc-issuer-url", why: "strata does not authenticate OIDC tokens"},
	{name: "oidc-client-id", why: "strata does not authenticate OIDC tokens"},
	{name: "authorization-config", why: "strata takes --authorization-mode and its files, not a structured authorization configuration"},
	{name: "requestheader-client-ca-file", why: "strata does not authenticate front proxies (no aggregated APIs)"},
	{name: "requestheader-allowed-names", why: "strata does not authenticate front proxies (no aggregated APIs)"},
	{name: "requestheader-username-headers", why: "strata does not authenticate front proxies (no aggregated APIs)"},
	{name: "requestheader-group-headers", why: "strata does not authenticate front proxies (no aggregated APIs)"},
	{name: "requestheader-extra-headers-prefix", why: "strata does not authenticate front proxies (no aggregated APIs)"},
	{name: "proxy-client-cert-file", why: "strata serves no aggregated APIs"},
	{name: "proxy-client-key-file", why: "strata serves no aggregated APIs"},
	{name: "egress-selector-config-file", why: "strata dials webhooks directly"},
	{name: "cors-allowed-origins", why: "strata does not answer CORS requests"},
	{name: "strict-transport-security-directives", why: "strata sends no Strict-Transport-Security header"},
}

// addKubeAPIServerFlags registers kubeAPIServerFlags, hidden.
func addKubeAPIServerFlags(f *pflag.FlagSet) {
	for _, k := range kubeAPIServerFlags {
		f.String(k.name, "", "kube-apiserver's --"+k.name+" (see docs/testing.md)")
		if k.bool {
			f.Lookup(k.name).NoOptDefVal = "true"
		}
		_ = f.MarkHidden(k.name) // registered just above
	}
}

// checkKubeAPIServerFlags refuses the kubeAPIServerFlags given that strata
// refuses, with why, and warns on stderr of the others given.
func checkKubeAPIServerFlags(f *pflag.FlagSet, stderr io.Writer) error {
	for _, k := range kubeAPIServerFlags {
		fl := f.Lookup(k.name)
		if fl == nil || !fl.Changed || slices.Contains(k.ok, fl.Value.String()) {
			continue
		}
		if k.why != "" {
			return cli.UsageError{Err: fmt.Errorf("--%s=%s: %w: %s", k.name, fl.Value, errRefused, k.why)}
		}
		fmt.Fprintf(stderr, "warning: kube-apiserver flag --%s=%s is ignored: it cannot change what strata's clients see\n", k.name, fl.Value)
	}
	return nil
}
