package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/controllers"
	"github.com/stratadev/strata/server"
)

// DefaultControllers are the kube-controller-manager controllers a test's
// server runs unless Controllers says otherwise: the garbage collector
// only. Namespace deletion finishes without a controller (strata's API
// empties a terminating namespace itself). The service-account and root
// CA publisher controllers stay off so that a test's namespace holds only
// the test's own objects (no default ServiceAccount, no kube-root-ca.crt).
var DefaultControllers = []string{controllers.GarbageCollectorName}

// shutdownTimeout bounds a server's graceful stop at the end of a test:
// its requests in flight are the test's own, already ended.
const shutdownTimeout = 5 * time.Second

// Option changes how Start configures a server.
type Option func(*settings)

type settings struct {
	controllers []string
	crds        []*apiextensionsv1.CustomResourceDefinition
	crdPaths    []string
	webhooks    *WebhookInstallOptions
	logger      *slog.Logger
	edits       []func(*server.Options)
}

// Controllers selects the controllers the server runs, in
// kube-controller-manager's --controllers syntax ("*" for every one strata
// runs by default, "-name" to leave one out); none when called without
// names. Default DefaultControllers.
func Controllers(names ...string) Option {
	return func(s *settings) { s.controllers = append([]string{}, names...) }
}

// CRDs installs the CustomResourceDefinitions before Start returns, each
// Established and its resources in discovery.
func CRDs(crds ...*apiextensionsv1.CustomResourceDefinition) Option {
	return func(s *settings) { s.crds = append(s.crds, crds...) }
}

// CRDDirectoryPaths installs the CustomResourceDefinitions (apiextensions.k8s.io/v1)
// in the YAML and JSON files of each directory, or in each file named,
// as CRDs does. Documents of other kinds are skipped, as envtest skips
// them; a path that does not exist fails the test.
func CRDDirectoryPaths(paths ...string) Option {
	return func(s *settings) { s.crdPaths = append(s.crdPaths, paths...) }
}

// Logger receives the server's logs; default none. Do not hand it a
// logger that writes to the test's t: the server logs while it stops,
// and strata's upstream code logs through one process-wide logger.
func Logger(l *slog.Logger) Option { return func(s *settings) { s.logger = l } }

// ServerOptions edits the server's options (strata server's flags) after
// the package has set its own, for what the other options do not cover.
func ServerOptions(edit func(*server.Options)) Option {
	return func(s *settings) { s.edits = append(s.edits, edit) }
}

// Env is a running server of one test.
type Env struct {
	// Config reaches the server as its administrator (a member of
	// system:masters), without client-side rate limits.
	Config *rest.Config
	t      testing.TB
	users  *authority
}

// Start starts a server for t, stopped when t ends, and returns its
// administrator's client configuration. It fails t if the server does not
// start.
func Start(t testing.TB, opts ...Option) *rest.Config { return New(t, opts...).Config }

// New is Start, returning the Env, through which AddUser adds users.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	s := &settings{controllers: DefaultControllers, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(s)
	}
	env, err := start(t, s)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return env
}

// start runs the server and registers its stop with t.Cleanup before
// anything that may fail after it started.
func start(t testing.TB, s *settings) (*Env, error) {
	dir, users, saKey, err := prepareDir()
	if err != nil {
		return nil, err
	}
	o := serverOptions(s, dir, users.caFile, saKey)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := server.Start(ctx, o)
	if err != nil {
		cancel()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the API server in %s: %w", dir, err)
	}
	clients := newConns()
	t.Cleanup(func() {
		clients.closeAll()
		cancel()
		if err := r.Wait(); err != nil {
			t.Errorf("testenv: the API server stopped with: %v", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("testenv: removing the server's directory: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", r.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the admin's kubeconfig %s: %w", r.Kubeconfig, err)
	}
	// A test's requests are its own: client-go's default of 5 per second
	// would pace a test rather than the server.
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Dial = clients.dial
	env := &Env{Config: cfg, t: t, users: users}
	if err := env.installCRDs(s); err != nil {
		return nil, err
	}
	if err := env.installWebhooks(s, dir); err != nil {
		return nil, err
	}
	return env, nil
}

// prepareDir makes the server's directory with the CA of AddUser's users
// and the service-account signing key in it.
func prepareDir() (dir string, users *authority, saKey string, err error) {
	// Not t.TempDir: its path carries the test's name, and etcd's unix
	// socket inside it must stay under the kernel's 107 bytes.
	if dir, err = os.MkdirTemp("", "strata-testenv-"); err != nil {
		return "", nil, "", fmt.Errorf("data directory: %w", err)
	}
	if users, err = newClientCA(dir); err == nil {
		saKey, err = writeServiceAccountKey(dir)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, "", err
	}
	return dir, users, saKey, nil
}

// serverOptions are strata server's options for a test's server in dir.
func serverOptions(s *settings, dir, clientCAFile, saKeyFile string) *server.Options {
	o := server.NewOptions()
	o.DataDir = filepath.Join(dir, "data")
	o.BindAddress, o.SecurePort = "127.0.0.1", 0
	o.ClientCAFile = clientCAFile
	o.EtcdUnsafeNoFsync = true
	o.ServiceAccounts.SigningKeyFile = saKeyFile
	o.Controllers = slices.Clone(s.controllers)
	o.Logger = s.logger
	o.ShutdownTimeout = shutdownTimeout
	// A test's server lives for seconds: compaction would only take CPU
	// from the tests beside it.
	o.CompactionInterval = -1
	for _, edit := range s.edits {
		edit(o)
	}
	return o
}
