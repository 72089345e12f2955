package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Server runs (or stands for) the etcd that strata uses.
type Server struct {
	cfg  *Config
	mu   sync.Mutex
	etcd *embed.Etcd
	done chan struct{}
}

// NewServer returns a Server for a completed configuration.
func NewServer(cfg *Config) *Server {
	return &Server{cfg: cfg, done: make(chan struct{})}
}

// Run starts the embedded member and waits until it serves clients, at most
// the configured StartTimeout. It returns when etcd is ready; the member is
// stopped when ctx ends, after which Done is closed. For external etcd, Run
// only arranges for Done to close when ctx ends.
func (s *Server) Run(ctx context.Context) error {
	if !s.cfg.Embedded() {
		go func() { <-ctx.Done(); close(s.done) }()
		return nil
	}
	e, err := s.start()
	if err != nil {
		close(s.done)
		return fmt.Errorf("etcd: starting embedded etcd in %s: %w", s.cfg.opts.DataDir, err)
	}
	if err := s.waitReady(ctx, e); err != nil {
		e.Close()
		close(s.done)
		return err
	}
	s.mu.Lock()
	s.etcd = e
	s.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-e.Server.StopNotify():
		}
		e.Close()
		close(s.done)
	}()
	return nil
}

// start starts the member. Ports the launcher chose itself may have been
// taken by another process since; then it chooses again, a few times.
func (s *Server) start() (*embed.Etcd, error) {
	for attempt := 1; ; attempt++ {
		e, err := embed.StartEtcd(s.embedConfig())
		if err == nil || !s.cfg.autoPorts || attempt == 3 || !errors.Is(err, syscall.EADDRINUSE) {
			return e, err
		}
		if err := s.cfg.choosePorts(); err != nil {
			return nil, err
		}
	}
}

func (s *Server) waitReady(ctx context.Context, e *embed.Etcd) error {
	timeout := s.cfg.opts.StartTimeout
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("etcd: embedded etcd in %s failed while starting: %w", s.cfg.opts.DataDir, err)
	case <-timer.C:
		return fmt.Errorf("etcd: embedded etcd in %s was not ready within %s", s.cfg.opts.DataDir, timeout)
	case <-ctx.Done():
		return fmt.Errorf("etcd: embedded etcd in %s: start cancelled: %w", s.cfg.opts.DataDir, ctx.Err())
	}
}

func (s *Server) embedConfig() *embed.Config {
	o := s.cfg.opts
	ec := embed.NewConfig()
	ec.Name = o.Name
	ec.Dir = o.DataDir
	ec.ListenClientUrls = []url.URL{s.cfg.clientURL}
	ec.AdvertiseClientUrls = []url.URL{s.cfg.clientURL}
	ec.ListenPeerUrls = []url.URL{s.cfg.peerURL}
	ec.AdvertisePeerUrls = []url.URL{s.cfg.peerURL}
	ec.InitialCluster = ec.InitialClusterFromName(o.Name)
	if o.InitialCluster != "" {
		ec.InitialCluster = o.InitialCluster
		ec.InitialClusterToken = "strata"
	}
	ec.MaxRequestBytes = o.MaxRequestBytes
	ec.LogLevel = o.LogLevel
	ec.LogOutputs = []string{"stderr"}
	ec.UnsafeNoFsync = o.UnsafeNoFsync
	// strata compacts through the compact_rev_key protocol, not etcd's own.
	ec.AutoCompactionRetention = "0"
	return ec
}

// Done is closed once the embedded member has stopped (or, for external etcd,
// once Run's context ended).
func (s *Server) Done() <-chan struct{} { return s.done }

// Endpoints returns the client URLs to dial.
func (s *Server) Endpoints() []string { return s.cfg.Endpoints() }

// Client dials the configured endpoints. The caller closes the client.
func (s *Server) Client() (*clientv3.Client, error) { return s.cfg.Client() }

// Client dials the configured endpoints with TLS when configured. The caller
// closes the client.
func (c *Config) Client() (*clientv3.Client, error) {
	cc := clientv3.Config{
		Endpoints:          c.Endpoints(),
		DialTimeout:        10 * time.Second,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: int(c.opts.MaxRequestBytes) + 64*1024,
	}
	if c.tlsEnabled {
		t, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		cc.TLS = t
	}
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("etcd: connecting to %v: %w", c.endpoints, err)
	}
	return cli, nil
}

func (c *Config) tlsConfig() (*tls.Config, error) {
	info := transport.TLSInfo{
		TrustedCAFile: c.opts.CAFile,
		CertFile:      c.opts.CertFile,
		KeyFile:       c.opts.KeyFile,
	}
	t, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd: TLS configuration (ca %q, cert %q, key %q): %w",
			c.opts.CAFile, c.opts.CertFile, c.opts.KeyFile, err)
	}
	return t, nil
}
