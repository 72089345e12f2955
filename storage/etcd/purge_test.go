package etcd

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/storage/wal"
)

// TestLogKeepsWhatSnapshotsNeed: once a member has taken snapshots, a
// restart leaves only the files of its log from the one holding the newest
// snapshot's entry on (the files etcd still locks), and every key written
// reads back from the restarted member.
func TestLogKeepsWhatSnapshotsNeed(t *testing.T) {
	defer func(was int64) { wal.SegmentSizeBytes = was }(wal.SegmentSizeBytes)
	wal.SegmentSizeBytes = 64 << 10
	dir := filepath.Join(t.TempDir(), "etcd")
	opts := Options{DataDir: dir, LogLevel: "fatal", UnsafeNoFsync: true}
	// etcd snapshots every 10,000 entries: 10,500 puts take one.
	const keys = 10500
	run(t, opts, func(ctx context.Context, s *Server) { putKeys(t, ctx, s, keys) })
	before := walFiles(t, dir)
	snap := newestSnapshotIndex(t, dir)
	if len(before) < 10 {
		t.Fatalf("%d files of log after %d puts of 64 KiB files; want many", len(before), keys)
	}
	run(t, opts, func(ctx context.Context, s *Server) {
		// etcd deletes the files on its start, one after the other, in a
		// goroutine of its own.
		holdsSnap := func(files []uint64) bool { return len(files) >= 2 && files[0] <= snap && snap < files[1] }
		after := walFiles(t, dir)
		for deadline := time.Now().Add(10 * time.Second); !holdsSnap(after) && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			after = walFiles(t, dir)
		}
		if !holdsSnap(after) {
			t.Errorf("log files start at entries %v after a restart; want the first to hold the newest snapshot's entry %d (before: %v)", after, snap, before)
		}
		cli, err := s.Client()
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		for _, k := range []string{key(0), key(keys / 2), key(keys - 1)} {
			resp, err := cli.Get(ctx, k)
			if err != nil || len(resp.Kvs) != 1 {
				t.Fatalf("get %s after the restart: %v, %v", k, resp, err)
			}
		}
	})
}

func key(i int) string { return fmt.Sprintf("/k/%05d", i) }

// putKeys writes n keys of 200 bytes, 16 at a time.
func putKeys(t *testing.T, ctx context.Context, s *Server, n int) {
	t.Helper()
	cli, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := cli.Put(ctx, key(i), strings.Repeat("v", 200)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// walFiles returns the first entry index of each file of dir's log, in order.
func walFiles(t *testing.T, dir string) []uint64 {
	return nameIndices(t, filepath.Join(dir, "member", "wal"), "wal")
}

// newestSnapshotIndex is the entry index of dir's newest snapshot file.
func newestSnapshotIndex(t *testing.T, dir string) uint64 {
	snaps := nameIndices(t, filepath.Join(dir, "member", "snap"), "snap")
	if len(snaps) == 0 {
		t.Fatalf("no snapshot in %s", dir)
	}
	return snaps[len(snaps)-1]
}

// nameIndices returns, in order, the entry indices in the names of the
// files of dir ending in ext, which etcd names <hex>-<hex index>.<ext>.
func nameIndices(t *testing.T, dir, ext string) []uint64 {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*."+ext))
	if err != nil {
		t.Fatal(err)
	}
	var idx []uint64
	for _, n := range names {
		var prefix, index uint64
		if _, err := fmt.Sscanf(filepath.Base(n), "%016x-%016x."+ext, &prefix, &index); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		idx = append(idx, index)
	}
	slices.Sort(idx)
	return idx
}
