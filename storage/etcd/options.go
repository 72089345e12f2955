package etcd

import (
	"errors"
	"fmt"
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

// Options is what a user says about etcd, typically through command-line
// flags. The zero value with a DataDir runs an embedded member on random
// loopback ports.
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
	// ClientPort and PeerPort are the embedded member's loopback ports; 0
	// picks a free port.
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
	// UnsafeNoFsync disables fsync in the embedded member. Only for
	// benchmarks and throwaway tests: acknowledged writes may be lost.
	UnsafeNoFsync bool
}

// Config is a validated Options with every default applied and every port
// chosen. Build it with Options.Complete.
type Config struct {
	opts       Options
	clientURL  url.URL
	peerURL    url.URL
	endpoints  []string
	tlsEnabled bool
	// autoPorts: the launcher chose the ports itself, so it may choose again.
	autoPorts bool
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
	o.applyDefaults()
	c := &Config{opts: o, autoPorts: o.ClientPort == 0 && o.PeerPort == 0 && o.InitialCluster == ""}
	if err := c.choosePorts(); err != nil {
		return nil, err
	}
	return c, nil
}

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
}

func (o Options) completeExternal() (*Config, error) {
	for _, s := range o.Servers {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("etcd: options: server %q: want an http:// or https:// URL with a host", s)
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

// MaxRequestBytes returns the request size limit the member enforces.
func (c *Config) MaxRequestBytes() uint { return c.opts.MaxRequestBytes }

func loopbackURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
}

// freePorts returns the given ports, with each 0 replaced by a free loopback
// port. The listeners that found them stay open until all are found, so the
// ports differ; they are released before etcd binds them, and a collision
// with another process is retried by Server.Run.
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
