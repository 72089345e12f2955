package etcd

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.uber.org/zap"
)

// closeTimeout bounds how long a member that failed to start may take to
// close: a damaged data directory can leave etcd's Close blocked for ever.
const closeTimeout = 5 * time.Second

// walSegmentBytes is the size at which etcd begins a new file of its
// write-ahead log (etcd's own: 64 MB). Every start reads the files etcd
// keeps: strata's check (walcheck.go) and etcd's snapshot records
// (wal.ValidSnapshotEntries) all of them, etcd's WAL.ReadAll those from the
// one holding the newest snapshot's entry on, which are all it keeps
// (maxWALFiles). That file's entries before the snapshot are read for
// nothing: with 64 MB files a loaded start reads tens of megabytes three
// times; with 8 MiB files at most 8 MiB of them are read.
// Smaller files cost the write path: each new file is three fsyncs.
const walSegmentBytes = 8 << 20

// maxWALFiles is etcd's --max-wals (its default: 5): at start and every
// 30 s, while its log has more files than this, etcd deletes the oldest
// one, unless it still locks it. It locks every file from the one with the
// newest snapshot's entry on, so with one the log keeps just those: a
// start after 20,000 writes of 1.4 KB then reads its log's last 8 MiB
// twice (strata's check and etcd's ValidSnapshotEntries) instead of 32
// MiB. The files deleted hold only entries the database and the snapshot
// already have.
const maxWALFiles = 1

// init sets the segment size, a variable of etcd's package, before any
// member of this process starts (etcd reads it whenever it begins a file).
func init() { wal.SegmentSizeBytes = walSegmentBytes }

// Server runs (or stands for) the etcd that strata uses.
type Server struct {
	cfg  *Config
	mu   sync.Mutex
	etcd *embed.Etcd
	lock *os.File // the data directory's lock, held while the member runs
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
//
// Before etcd starts, the data directory is locked (a second process on it
// fails at once) and checked for the damage etcd would hang or panic on; the
// error then names the file and what to do.
func (s *Server) Run(ctx context.Context) error {
	if !s.cfg.Embedded() {
		go func() { <-ctx.Done(); close(s.done) }()
		return nil
	}
	e, err := s.start()
	if err == nil {
		err = s.waitReady(ctx, e)
	}
	if err == nil {
		err = s.restrictSockets()
	}
	if err != nil {
		if e != nil {
			closeBounded(e)
		}
		s.unlock()
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
		s.unlock()
		close(s.done)
	}()
	return nil
}

// Lock takes the embedded member's data directory lock ahead of Run,
// which otherwise takes it: a second process on the directory fails here,
// and the caller may then write beside the directory while Run starts the
// member. Run must follow a successful Lock (it releases the lock when it
// fails, or once the member has stopped). For external etcd it does
// nothing.
func (s *Server) Lock() error {
	if !s.cfg.Embedded() || s.lock != nil {
		return nil
	}
	lock, err := lockDataDir(s.cfg.opts.DataDir)
	if err != nil {
		return err
	}
	s.lock = lock
	return nil
}

// start locks (unless Lock did) and checks the data directory and starts
// the member.
func (s *Server) start() (*embed.Etcd, error) {
	dir := s.cfg.opts.DataDir
	if err := s.Lock(); err != nil {
		return nil, err
	}
	if err := checkDataDir(dir, s.cfg.opts.logger()); err != nil {
		return nil, err
	}
	e, err := startBounded(s.embedConfig(), s.cfg.opts.StartTimeout)
	if err != nil {
		return nil, fmt.Errorf("etcd: starting embedded etcd in %s: %w", dir, err)
	}
	return e, nil
}

// startBounded is embed.StartEtcd, given at most timeout: when it fails it
// closes what it began itself, which a damaged directory can block, so the
// failure is reported after timeout instead of never.
func startBounded(ec *embed.Config, timeout time.Duration) (*embed.Etcd, error) {
	type result struct {
		e   *embed.Etcd
		err error
	}
	ch := make(chan result, 1)
	go func() {
		e, err := embed.StartEtcd(ec)
		ch <- result{e, err}
	}()
	select {
	case r := <-ch:
		return r.e, r.err
	case <-time.After(timeout):
		// A member that starts after all is closed before the failure is
		// reported, so that none of it outlives the caller's cleanup of
		// the directory (etcd exits the process when its files vanish);
		// the wait is bounded, since a damaged directory can block.
		select {
		case r := <-ch:
			if r.e != nil {
				closeBounded(r.e)
			}
		case <-time.After(closeTimeout):
			go func() {
				if r := <-ch; r.e != nil {
					r.e.Close()
				}
			}()
		}
		return nil, fmt.Errorf("etcd neither started nor failed within %s", timeout)
	}
}

// closeBounded closes a member that failed to start, giving up after
// closeTimeout: the process is about to report the failure and exit.
func closeBounded(e *embed.Etcd) {
	done := make(chan struct{})
	go func() { e.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeTimeout):
	}
}

// restrictSockets makes the client socket's own mode 0600 too (its
// directory, 0700, already keeps other users out).
func (s *Server) restrictSockets() error {
	if p := s.cfg.Socket(); p != "" {
		if err := os.Chmod(p, 0o600); err != nil {
			return fmt.Errorf("etcd: restricting socket %s to mode 0600: %w", p, err)
		}
	}
	return nil
}

func (s *Server) unlock() {
	if s.lock != nil {
		s.lock.Close() // closing the descriptor releases the flock
		s.lock = nil
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
	if s.cfg.unix {
		// A single member has no peers to listen for (etcd listens for
		// peers on a unix socket only at a path relative to its working
		// directory, or else on an abstract socket any process could
		// reach). The advertised URL only names the member.
		ec.ListenPeerUrls = nil
	}
	ec.InitialCluster = ec.InitialClusterFromName(o.Name)
	if o.InitialCluster != "" {
		ec.InitialCluster = o.InitialCluster
		ec.InitialClusterToken = "strata"
	} else {
		singleMemberTicks(ec)
	}
	ec.MaxRequestBytes = o.MaxRequestBytes
	ec.QuotaBackendBytes = o.QuotaBackendBytes
	ec.LogLevel = o.LogLevel
	ec.LogOutputs = []string{"stderr"}
	ec.UnsafeNoFsync = o.UnsafeNoFsync
	ec.MaxWalFiles = maxWALFiles
	// strata compacts through the compact_rev_key protocol, not etcd's own.
	ec.AutoCompactionRetention = "0"
	return ec
}

// singleMemberTicks shortens the raft tick of a member that is its
// cluster's only voter, for its start: it serves nothing until it has
// elected itself, and raft waits a random election timeout of one to two
// election timeouts first, of which etcd skips all but a tick. With
// etcd's 100 ms tick and 1 s timeout that left 0.1 to 1 s of every start;
// with a 10 ms tick and a 50 ms timeout (the least etcd takes: five
// ticks) it is 10 to 50 ms. The timeouts have nothing else to decide
// with no peers: no other member can time out waiting for this one's
// heartbeats, nor campaign. (etcd's shortest lease TTL, 1.5 election
// timeouts rounded up to a second, is then 1 s instead of 2 s.)
func singleMemberTicks(ec *embed.Config) {
	ec.TickMs = 10
	ec.ElectionMs = 50
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
