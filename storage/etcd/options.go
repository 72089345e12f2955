package etcd

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"
)

// DefaultStartTimeout bounds how long Run waits for an embedded member to
// become ready.
const DefaultStartTimeout = 60 * time.Second

// DefaultMaxRequestBytes is etcd's default limit on one request (1.5 MiB); the
// storage layer refuses larger objects with a 413-class error before etcd does.
const DefaultMaxRequestBytes = 1536 * 1024

// DefaultQuotaBackendBytes is etcd's default space quota (2 GiB).
const DefaultQuotaBackendBytes = 2 << 30

// maxSocketPath is the longest path a unix socket may have on Linux: the
// 108 bytes of sockaddr_un.sun_path, less the terminating NUL.
const maxSocketPath = 107

// ClientSocket is the embedded member's client socket, in its data
// directory. PeerSocket is the name its peer URL gives: a single member
// listens for no peers, so the file never exists.
const (
	ClientSocket = "etcd.sock"
	PeerSocket   = "peer.sock"
)

// Options is what a user says about etcd, typically through command-line
// flags. The zero value with a DataDir runs an embedded member reachable
// only through unix sockets in that (0700) directory.
type Options struct {
	// DataDir holds the embedded member's data. Required unless Servers is set.
	DataDir string
	// Servers lists external etcd client URLs (--etcd-servers). When set, no
	// embedded member is started.
	Servers []string
	// CAFile, CertFile and KeyFile configure TLS to external servers
	// (--etcd-cafile, --etcd-certfile, --etcd-keyfile).
	CAFile, CertFile, KeyFile string

	// Name is the embedded member's name; default "default".
	Name string
	// ClientPort and PeerPort, when either is set (or InitialCluster is),
	// put the embedded member on loopback TCP ports instead of unix
	// sockets, without authentication: for multi-member test clusters
	// only. 0 picks a free port.
	ClientPort, PeerPort int
	// InitialCluster, when set, is etcd's initial-cluster string
	// ("name=http://127.0.0.1:port,...") for a multi-member embedded cluster;
	// PeerPort must then be set and match this member's entry.
	InitialCluster string
	// StartTimeout bounds the readiness wait; default DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxRequestBytes is the embedded member's request size limit; default
	// DefaultMaxRequestBytes.
	MaxRequestBytes uint
	// LogLevel is the embedded member's zap log level; default "error".
	LogLevel string
	// QuotaBackendBytes is the embedded member's space quota (etcd's
	// --quota-backend-bytes); 0 is DefaultQuotaBackendBytes.
	QuotaBackendBytes int64
	// UnsafeNoFsync disables fsync in the embedded member. Only for
	// benchmarks and throwaway tests: acknowledged writes may be lost.
	UnsafeNoFsync bool
	// Logger receives what the start's check of the data directory
	// repairs (a log's cut-short last record); nil discards it.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Config is a validated Options with every default applied and every port
// chosen. Build it with Options.Complete.
type Config struct {
	opts       Options
	clientURL  url.URL
	peerURL    url.URL
	endpoints  []string
	tlsEnabled bool
	// unix: the member listens on unix sockets in its data directory.
	unix bool
}

// Complete validates o, applies defaults and picks free ports.
func (o Options) Complete() (*Config, error) {
	if len(o.Servers) > 0 {
		return o.completeExternal()
	}
	if o.DataDir == "" {
		return nil, errors.New("etcd: options: a data directory is required for embedded etcd (or set servers)")
	}
	dir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("etcd: options: data directory %q: %w", o.DataDir, err)
	}
	o.DataDir = dir
	if o.QuotaBackendBytes < 0 {
		return nil, fmt.Errorf("etcd: options: quota-backend-bytes %d: must not be negative (0: the default of %d)",
			o.QuotaBackendBytes, DefaultQuotaBackendBytes)
	}
	o.applyDefaults()
	c := &Config{opts: o, unix: o.ClientPort == 0 && o.PeerPort == 0 && o.InitialCluster == ""}
	if c.unix {
		return c, c.chooseSockets()
	}
	if err := c.choosePorts(); err != nil {
		return nil, err
	}
	return c, nil
}

// chooseSockets puts the client listener on a unix socket in the data
// directory, whose 0700 mode keeps every other user out, and names the
// member's peer URL there too: no TCP port is opened. A path over the kernel's limit is refused with its length
// rather than silently truncated by bind.
func (c *Config) chooseSockets() error {
	for _, name := range []string{ClientSocket, PeerSocket} {
		if p := filepath.Join(c.opts.DataDir, name); len(p) > maxSocketPath {
			return fmt.Errorf("etcd: options: unix socket path %s is %d bytes, over the limit of %d: choose a shorter data directory",
				p, len(p), maxSocketPath)
		}
	}
	c.clientURL = socketURL(filepath.Join(c.opts.DataDir, ClientSocket))
	c.peerURL = socketURL(filepath.Join(c.opts.DataDir, PeerSocket))
	c.endpoints = []string{c.clientURL.String()}
	return nil
}

// socketURL is etcd's URL of a unix socket at an absolute path.
func socketURL(path string) url.URL { return url.URL{Scheme: "unix", Path: path} }

// choosePorts fills in the client and peer ports left at 0 with free loopback
// ports, distinct from each other, and derives the URLs from them.
func (c *Config) choosePorts() error {
	ports, err := freePorts(c.opts.ClientPort, c.opts.PeerPort)
	if err != nil {
		return err
	}
	c.clientURL, c.peerURL = loopbackURL(ports[0]), loopbackURL(ports[1])
	c.endpoints = []string{c.clientURL.String()}
	return nil
}

func (o *Options) applyDefaults() {
	if o.Name == "" {
		o.Name = "default"
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.LogLevel == "" {
		o.LogLevel = "error"
	}
	if o.QuotaBackendBytes == 0 {
		o.QuotaBackendBytes = DefaultQuotaBackendBytes
	}
}

func (o Options) completeExternal() (*Config, error) {
	for _, s := range o.Servers {
		u, err := url.Parse(s)
		if err == nil && u.Scheme == "unix" && filepath.IsAbs(u.Path) && u.Host == "" {
			continue // an embedded member's socket, for another process of the same user
		}
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("etcd: options: server %q: want an http:// or https:// URL with a host, or unix:///absolute/path", s)
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("etcd: options: the client certificate and key files must be given together")
	}
	o.applyDefaults()
	tls := o.CAFile != "" || o.CertFile != ""
	return &Config{opts: o, endpoints: append([]string(nil), o.Servers...), tlsEnabled: tls}, nil
}

// Embedded reports whether this configuration runs an embedded member.
func (c *Config) Embedded() bool { return len(c.opts.Servers) == 0 }

// Endpoints returns the client URLs to dial.
func (c *Config) Endpoints() []string { return append([]string(nil), c.endpoints...) }

// PeerURL returns the embedded member's peer URL (empty for external etcd).
func (c *Config) PeerURL() string {
	if !c.Embedded() {
		return ""
	}
	return c.peerURL.String()
}

// Socket returns the embedded member's client socket path, or "" when it
// listens on TCP or is external.
func (c *Config) Socket() string {
	if !c.Embedded() || !c.unix {
		return ""
	}
	return c.clientURL.Path
}

// QuotaBackendBytes returns the embedded member's space quota (0 for
// external etcd, whose quota strata does not know).
func (c *Config) QuotaBackendBytes() int64 {
	if !c.Embedded() {
		return 0
	}
	return c.opts.QuotaBackendBytes
}

// MaxRequestBytes returns the request size limit the member enforces.
func (c *Config) MaxRequestBytes() uint { return c.opts.MaxRequestBytes }

func loopbackURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
}

// freePorts returns the given ports, with each 0 replaced by a free loopback
// port. The listeners that found them stay open until all are found, so the
// ports differ; they are released before etcd binds them.
func freePorts(ports ...int) ([]int, error) {
	out := make([]int, len(ports))
	for i, port := range ports {
		if port < 0 || port > 65535 {
			return nil, fmt.Errorf("etcd: options: port %d: must be within 0-65535", port)
		}
		out[i] = port
		if port != 0 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("etcd: options: finding a free loopback port: %w", err)
		}
		defer l.Close()
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out, nil
}
