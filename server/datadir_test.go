package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadev/strata/storage/etcd"
)

// TestStartOnDamagedDataDir: strata server on a data directory whose
// embedded etcd is damaged, or in use, ends promptly with one error naming
// the file, instead of hanging or panicking.
func TestStartOnDamagedDataDir(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, etcdDir string) (file string)
	}{
		{"database of garbage", func(t *testing.T, etcdDir string) string {
			db := filepath.Join(etcdDir, "member", "snap", "db")
			if err := os.WriteFile(db, []byte(strings.Repeat("garbage!", 4096)), 0o600); err != nil {
				t.Fatal(err)
			}
			return db
		}},
		{"WAL directory missing", func(t *testing.T, etcdDir string) string {
			wal := filepath.Join(etcdDir, "member", "wal")
			if err := os.RemoveAll(wal); err != nil {
				t.Fatal(err)
			}
			return wal
		}},
		{"in use", func(t *testing.T, etcdDir string) string {
			startMember(t, etcdDir) // until the test ends
			return etcdDir
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.DataDir, o.SecurePort = t.TempDir(), 0
			o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			stop := startMember(t, o.etcdDir())
			stop()
			file := tt.damage(t, o.etcdDir())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := Start(ctx, o)
			if err == nil {
				cancel()
				r.Wait()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), "\n") || ctx.Err() != nil {
				t.Fatalf("got %q (context: %v), want one line naming %s before the deadline", err, ctx.Err(), file)
			}
		})
	}
}

// startMember runs an embedded etcd member in dir; stop ends it (also at
// the end of the test).
func startMember(t *testing.T, dir string) (stop func()) {
	t.Helper()
	c, err := etcd.Options{DataDir: dir, LogLevel: "fatal"}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := etcd.NewServer(c)
	if err := srv.Run(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	stop = func() { cancel(); <-srv.Done() }
	t.Cleanup(stop)
	return stop
}
