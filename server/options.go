package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/stratadev/strata/admission"
	"github.com/stratadev/strata/apiserver/filters"
	"github.com/stratadev/strata/apiserver/filters/audit"
	"github.com/stratadev/strata/apiserver/filters/timeout"
	"github.com/stratadev/strata/authz"
	"github.com/stratadev/strata/controllers"
	"github.com/stratadev/strata/registry/servicealloc"
	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/strategicpatch"
)

// Options are the settings of strata server, one per command-line flag.
type Options struct {
	// DataDir holds the embedded etcd's data, the certificates, the admin
	// token and the kubeconfig. Default DefaultDataDir.
	DataDir string
	// EtcdServers, when set, names an external etcd cluster; no embedded
	// member runs. EtcdCAFile/CertFile/KeyFile configure TLS to it.
	EtcdServers                           []string
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// BindAddress and SecurePort are where HTTPS is served. Port 0 picks
	// a free port (the kubeconfig names the one chosen).
	BindAddress string
	SecurePort  int
	// TLSCertFile and TLSPrivateKeyFile replace the generated serving
	// certificate.
	TLSCertFile, TLSPrivateKeyFile string
	// TokenAuthFile adds users by bearer token (kube-apiserver's CSV
	// format); ClientCAFile authenticates client certificates it signed.
	TokenAuthFile, ClientCAFile string
	// PlainHTTP serves HTTP without TLS and without authentication instead
	// of HTTPS (as kube-apiserver's old insecure port did: clients do not
	// send tokens over plain HTTP); allowed only on a loopback BindAddress.
	PlainHTTP bool
	// PatchCompat selects apimachinery's exact strategic-merge-patch
	// behaviour ("kubernetes") instead of strata's ("").
	PatchCompat string
	// QuotaBackendBytes is the embedded etcd's space quota, as etcd's
	// --quota-backend-bytes (0: etcd's default, 2 GiB).
	QuotaBackendBytes int64
	// EtcdUnsafeNoFsync runs the embedded etcd without fsync (etcd's
	// --unsafe-no-fsync): for throwaway servers only, such as a test's
	// own, since acknowledged writes may be lost in a crash.
	EtcdUnsafeNoFsync bool
	// WatchCacheSizeBytes bounds each resource's watch cache history by
	// the stored size of its events (0: storage.DefaultCacheBytes).
	WatchCacheSizeBytes int64
	// CompactionInterval is how often etcd history is compacted (0: the
	// default of five minutes; negative: never).
	CompactionInterval time.Duration
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// read-only and the mutating requests served at once (0: unlimited);
	// beyond them requests are answered 429, as by kube-apiserver's flags
	// of the same names. Watches are not counted, nor is system:masters
	// (the admin token) refused.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// ServiceClusterIPRange and ServiceNodePortRange are what Services'
	// cluster IPs and node ports are allocated from, as kube-apiserver's
	// flags of the same names (defaults DefaultServiceClusterIPRange,
	// DefaultServiceNodePortRange).
	ServiceClusterIPRange, ServiceNodePortRange string
	// AdvertiseAddress is the address the `kubernetes` Service's endpoints
	// name; default the bind address, or the host's default address when
	// that is loopback or unspecified (kube-apiserver's --advertise-address).
	AdvertiseAddress string
	// Profiling serves net/http/pprof under /debug/pprof/, behind
	// authentication and authorization as any non-resource path
	// (kube-apiserver's --profiling, on by default there too).
	Profiling bool
	// ShutdownTimeout bounds the graceful shutdown.
	ShutdownTimeout time.Duration
	// AuthorizationModes are kube-apiserver's --authorization-mode (default
	// RBAC); AuthorizationPolicyFile and AuthorizationWebhookConfigFile
	// its ABAC policy and webhook kubeconfig. AnonymousAuth lets requests
	// without credentials through as system:anonymous, for authorization
	// to decide (--anonymous-auth, default true); false answers them 401.
	AuthorizationModes                                      []string
	AuthorizationPolicyFile, AuthorizationWebhookConfigFile string
	AnonymousAuth                                           bool
	// RequestTimeout bounds requests that are not long-running (504
	// after it), as kube-apiserver's --request-timeout; 0 is unbounded.
	RequestTimeout time.Duration
	// Audit is the audit log: kube-apiserver's --audit-policy-file,
	// --audit-log-path and the log's rotation and format flags.
	Audit audit.Options
	// Admission is the admission chain: kube-apiserver's
	// --enable-admission-plugins, --disable-admission-plugins and
	// --admission-control-config-file.
	Admission admission.Options
	// ServiceAccounts configure service-account tokens
	// (serviceaccounts.go).
	ServiceAccounts ServiceAccountOptions
	// Controllers selects the kube-controller-manager controllers to run
	// (--controllers, its syntax and names: "*" all those on by default,
	// "name" one more, "-name" one less); default ["*"]. Names of
	// controllers strata does not run are accepted (controllers.Supported
	// lists those it does).
	Controllers []string
	controllers controllerOptions
	// Logger receives the server's logs; default slog.Default().
	Logger *slog.Logger
	// webhookDial, set by tests, dials the webhooks that service
	// references name (admission and conversion); nil: net.Dialer.
	webhookDial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Defaults of Options.
const (
	DefaultDataDir         = "strata-data"
	DefaultBindAddress     = "127.0.0.1"
	DefaultSecurePort      = 6443
	DefaultShutdownTimeout = 60 * time.Second
	// DefaultServiceClusterIPRange is kubeadm's (and kind's) range:
	// kube-apiserver's own fallback, 10.0.0.0/24, is deprecated.
	DefaultServiceClusterIPRange = servicealloc.DefaultServiceClusterIPRange
	DefaultServiceNodePortRange  = servicealloc.DefaultServiceNodePortRange
)

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{DataDir: DefaultDataDir, BindAddress: DefaultBindAddress, SecurePort: DefaultSecurePort,
		ShutdownTimeout:             DefaultShutdownTimeout,
		RequestTimeout:              timeout.Default,
		ServiceClusterIPRange:       DefaultServiceClusterIPRange,
		ServiceNodePortRange:        DefaultServiceNodePortRange,
		MaxRequestsInFlight:         filters.DefaultMaxRequestsInFlight,
		MaxMutatingRequestsInFlight: filters.DefaultMaxMutatingRequestsInFlight,
		ServiceAccounts:             ServiceAccountOptions{ExtendTokenExpiration: true},
		AuthorizationModes:          []string{authz.DefaultMode},
		Controllers:                 slices.Clone(controllers.DefaultSelection),
		AnonymousAuth:               true,
		Profiling:                   true}
}

// Validate checks the options and says what is wrong with the flag's name.
func (o *Options) Validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir: must not be empty"))
	}
	ip := net.ParseIP(o.BindAddress)
	if ip == nil {
		errs = append(errs, fmt.Errorf("--bind-address: %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port: %d is not a port (0 to 65535)", o.SecurePort))
	}
	if o.PlainHTTP && ip != nil && !ip.IsLoopback() {
		errs = append(errs, fmt.Errorf("--plain-http: refused on the non-loopback address %s: plain HTTP is served only on loopback", o.BindAddress))
	}
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file: give both or neither"))
	}
	if o.MaxRequestsInFlight < 0 {
		errs = append(errs, fmt.Errorf("--max-requests-inflight: %d must not be negative (0: unlimited)", o.MaxRequestsInFlight))
	}
	if o.MaxMutatingRequestsInFlight < 0 {
		errs = append(errs, fmt.Errorf("--max-mutating-requests-inflight: %d must not be negative (0: unlimited)", o.MaxMutatingRequestsInFlight))
	}
	if o.QuotaBackendBytes < 0 {
		errs = append(errs, fmt.Errorf("--quota-backend-bytes: %d must not be negative (0: etcd's default of 2 GiB)", o.QuotaBackendBytes))
	}
	if o.WatchCacheSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("--watch-cache-size-bytes: %d must not be negative (0: the default of %d)", o.WatchCacheSizeBytes, storage.DefaultCacheBytes))
	}
	if o.RequestTimeout < 0 {
		errs = append(errs, fmt.Errorf("--request-timeout: %s must not be negative (0: unbounded)", o.RequestTimeout))
	}
	if err := o.Audit.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Admission.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.ServiceAccounts.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.authzConfig(nil).Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := controllers.ParseSelection(o.Controllers); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.patchCompat(); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := o.serviceRanges(); err != nil {
		errs = append(errs, err)
	}
	if o.AdvertiseAddress != "" {
		// kube-apiserver refuses a public IP its endpoint reconciler
		// cannot write (loopback, link-local, unspecified).
		for _, e := range corevalidation.ValidateEndpointIP(o.AdvertiseAddress, nil) {
			errs = append(errs, fmt.Errorf("--advertise-address: cannot use public IP %s with endpoint reconciler: %s",
				o.AdvertiseAddress, e.Detail))
		}
	}
	return errors.Join(errs...)
}

// serviceRanges parses --service-cluster-ip-range and
// --service-node-port-range ("" for the defaults).
func (o *Options) serviceRanges() (*net.IPNet, utilnet.PortRange, error) {
	ipRange, portRange := o.ServiceClusterIPRange, o.ServiceNodePortRange
	if ipRange == "" {
		ipRange = DefaultServiceClusterIPRange
	}
	if portRange == "" {
		portRange = DefaultServiceNodePortRange
	}
	cidr, err := servicealloc.ParseClusterIPRange(ipRange)
	if err != nil {
		return nil, utilnet.PortRange{}, err
	}
	ports, err := servicealloc.ParseNodePortRange(portRange)
	return cidr, ports, err
}

func (o *Options) patchCompat() (strategicpatch.Compat, error) {
	switch o.PatchCompat {
	case "", "strata":
		return strategicpatch.Strata, nil
	case "kubernetes":
		return strategicpatch.Kubernetes, nil
	}
	return 0, fmt.Errorf("--patch-compat: %q is not one of \"kubernetes\", \"strata\"", o.PatchCompat)
}

// tuneStorage applies the storage flags to each resource's store.
func (o *Options) tuneStorage(c *storage.Config) {
	c.CacheBytes = o.WatchCacheSizeBytes
}

// paths inside the data directory.
func (o *Options) etcdDir() string        { return filepath.Join(o.DataDir, "etcd") }
func (o *Options) pkiDir() string         { return filepath.Join(o.DataDir, "pki") }
func (o *Options) kubeconfigPath() string { return filepath.Join(o.DataDir, "kubeconfig") }
