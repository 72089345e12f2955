package etcd

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startMember runs an embedded member in dir until the test ends.
func startMember(t *testing.T, o Options) *Server {
	t.Helper()
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := NewServer(c)
	if err := srv.Run(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-srv.Done() })
	return srv
}

// TestEmbeddedListensOnUnixSocketsOnly: the embedded member's client
// endpoint is a unix socket in its 0700 data directory, it listens for no
// peers, the process has no TCP listener, and strata's client works
// through the socket.
func TestEmbeddedListensOnUnixSocketsOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	srv := startMember(t, Options{DataDir: dir, LogLevel: "fatal"})
	client, peer := filepath.Join(dir, ClientSocket), filepath.Join(dir, PeerSocket)
	if got := srv.Endpoints(); len(got) != 1 || got[0] != "unix://"+client {
		t.Errorf("endpoints %v, want [unix://%s]", got, client)
	}
	ec := srv.embedConfig()
	for _, urls := range [][]string{urlStrings(ec.ListenClientUrls), urlStrings(ec.AdvertiseClientUrls),
		urlStrings(ec.ListenClientHttpUrls), urlStrings(ec.ListenMetricsUrls)} {
		for _, u := range urls {
			if u != "unix://"+client {
				t.Errorf("client URL %s, want unix://%s", u, client)
			}
		}
	}
	if len(ec.ListenPeerUrls) != 0 || len(srv.etcd.Peers) != 0 {
		t.Errorf("peer listeners %v %v, want none", ec.ListenPeerUrls, srv.etcd.Peers)
	}
	if got := urlStrings(ec.AdvertisePeerUrls); len(got) != 1 || got[0] != "unix://"+peer {
		t.Errorf("advertised peer URLs %v, want [unix://%s]", got, peer)
	}
	for _, l := range srv.etcd.Clients {
		if l.Addr().Network() != "unix" || l.Addr().String() != client {
			t.Errorf("client listener %s %s, want unix %s", l.Addr().Network(), l.Addr(), client)
		}
	}
	if _, err := os.Stat(peer); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want no such file", peer, err)
	}
	for path, want := range map[string]os.FileMode{dir: os.ModeDir | 0o700, client: os.ModeSocket | 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode(), err, want)
		}
	}
	if l := tcpListeners(t); len(l) > 0 {
		t.Errorf("the process listens on TCP: %v", l)
	}
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(context.Background(), "k", "v"); err != nil {
		t.Fatalf("put through the socket: %v", err)
	}
	if resp, err := cli.Get(context.Background(), "k"); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("get through the socket: %v %v", resp, err)
	}
}

// TestSocketPathTooLong: a data directory whose socket paths would exceed
// the kernel's limit is refused, naming the path.
func TestSocketPathTooLong(t *testing.T) {
	for _, tt := range []struct {
		dirLen int
		ok     bool
	}{{107 - len("/etcd.sock"), true}, {107 - len("/etcd.sock") + 1, false}} {
		dir := "/" + strings.Repeat("d", tt.dirLen-1)
		_, err := Options{DataDir: dir}.Complete()
		want := fmt.Sprintf("etcd: options: unix socket path %s/etcd.sock is 108 bytes, over the limit of 107: choose a shorter data directory", dir)
		if tt.ok && err != nil || !tt.ok && (err == nil || err.Error() != want) {
			t.Errorf("data directory of %d bytes: got %v, want ok=%v (%s)", tt.dirLen, err, tt.ok, want)
		}
	}
}

func urlStrings(urls []url.URL) []string {
	var out []string
	for _, u := range urls {
		out = append(out, u.String())
	}
	return out
}

// tcpListeners returns the local addresses of the TCP sockets in LISTEN
// state that this process holds, from /proc.
func tcpListeners(t *testing.T) []string {
	t.Helper()
	mine := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local rem st ... inode is the tenth field; 0A is LISTEN.
			if len(fields) > 9 && fields[3] == "0A" && mine[fields[9]] {
				out = append(out, fields[1])
			}
		}
		f.Close()
	}
	return out
}
