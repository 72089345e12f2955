package etcd

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// populated returns the data directory of a member that wrote a few keys
// and stopped.
func populated(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "etcd")
	run(t, Options{DataDir: dir, LogLevel: "fatal"}, func(ctx context.Context, srv *Server) {
		cli, err := srv.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		for _, k := range []string{"a", "b", "c"} {
			if _, err := cli.Put(ctx, k, strings.Repeat(k, 1000)); err != nil {
				t.Fatal(err)
			}
		}
	})
	return dir
}

// run starts a member with o, calls f and stops the member.
func run(t *testing.T, o Options, f func(context.Context, *Server)) {
	t.Helper()
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := NewServer(c)
	if err := srv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-srv.Done() }()
	f(ctx, srv)
}

func walFile(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "member", "wal", "*.wal"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no WAL file in %s: %v", dir, err)
	}
	return names[0]
}

// TestDamagedDataDir: a data directory etcd would hang or panic on makes
// Run fail, promptly, with an error naming the damaged file and what to do.
func TestDamagedDataDir(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, dir string) (file string)
		want   string
	}{
		{"empty WAL file", func(t *testing.T, dir string) string {
			f := walFile(t, dir)
			must(t, os.Truncate(f, 0))
			return filepath.Dir(f)
		}, "is damaged: it holds no committed snapshot record: restore the data directory from a backup, or move "},
		{"WAL file cut inside its header", func(t *testing.T, dir string) string {
			f := walFile(t, dir)
			must(t, os.Truncate(f, 5))
			return filepath.Dir(f)
		}, "is damaged: it holds no committed snapshot record"},
		{"WAL file cut after its first records", func(t *testing.T, dir string) string {
			f := walFile(t, dir)
			must(t, os.Truncate(f, 300))
			return filepath.Dir(f)
		}, "but the database "},
		{"WAL file cut before its last entries", func(t *testing.T, dir string) string {
			f := walFile(t, dir)
			must(t, os.Truncate(f, 2000))
			return filepath.Dir(f)
		}, "the log was cut short: restore the data directory from a backup, or move "},
		{"WAL directory missing", func(t *testing.T, dir string) string {
			must(t, os.RemoveAll(filepath.Join(dir, "member", "wal")))
			return filepath.Join(dir, "member", "wal")
		}, "the write-ahead log is missing but the database "},
		{"database of garbage", func(t *testing.T, dir string) string {
			db := filepath.Join(dir, "member", "snap", "db")
			must(t, os.WriteFile(db, []byte(strings.Repeat("garbage!", 8192)), 0o600))
			return db
		}, "is damaged: invalid database"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := populated(t)
			file := tt.damage(t, dir)
			c, err := Options{DataDir: dir, LogLevel: "fatal"}.Complete()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := NewServer(c)
			err = srv.Run(ctx)
			if err == nil {
				cancel()
				<-srv.Done()
				t.Fatal("Run succeeded on a damaged data directory")
			}
			if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want an error naming %s with %q", err, file, tt.want)
			}
			if ctx.Err() != nil {
				t.Fatalf("Run returned only at the test's deadline: %v", err)
			}
		})
	}
}

// TestDataDirInUse: a second member on a data directory in use fails at
// once, naming the directory, and the first keeps serving.
func TestDataDirInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "etcd")
	first := startMember(t, Options{DataDir: dir, LogLevel: "fatal"})
	c, err := Options{DataDir: dir, LogLevel: "fatal"}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	err = NewServer(c).Run(context.Background())
	want := "etcd: data directory " + dir + " is in use by another process (it holds " + filepath.Join(dir, "strata.lock") +
		"): stop it, or give this one another data directory"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	cli, err := first.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Put(context.Background(), "k", "v"); err != nil {
		t.Fatalf("the first member after the second failed: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTornLogTailWarned: a log whose last record was cut short (a write
// that never completed) starts, as etcd repairs it, but the check warns
// naming the file, since the write it held is dropped; an intact log
// warns of nothing.
func TestTornLogTailWarned(t *testing.T) {
	for _, tt := range []struct {
		name string
		cut  int // bytes cut from the end of what the last file holds
		want string
	}{
		{"intact", 0, ""},
		{"last record cut short", 3, "the write-ahead log's last record was cut short"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := populated(t)
			// Without a database etcd rebuilds it from the log, so the
			// log alone decides.
			must(t, os.Remove(filepath.Join(dir, "member", "snap", "db")))
			file := walFile(t, dir)
			data, err := os.ReadFile(file)
			must(t, err)
			written := len(bytes.TrimRight(data, "\x00"))
			if tt.cut > 0 {
				must(t, os.Truncate(file, int64(written-tt.cut)))
			}
			var logged bytes.Buffer
			if err := checkDataDir(dir, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
				t.Fatalf("checkDataDir: %v", err)
			}
			got := logged.String()
			if tt.want == "" && got != "" {
				t.Errorf("logged %q, want nothing", got)
			}
			if tt.want != "" && (!strings.Contains(got, tt.want) || !strings.Contains(got, "file="+file)) {
				t.Errorf("logged %q, want %q naming %s", got, tt.want, file)
			}
		})
	}
}
