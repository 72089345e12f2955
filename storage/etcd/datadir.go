package etcd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/storage/wal"
)

// lockFile is the file whose flock marks a data directory in use.
const lockFile = "strata.lock"

// fullCheckBytes: a database up to this size is checked page by page before
// etcd opens it; a larger one only has its meta pages and buckets checked,
// so that a healthy large member does not start seconds later.
const fullCheckBytes = 256 << 20

// lockDataDir creates dir (mode 0700, as etcd wants it; an existing
// directory is narrowed to it) and takes an exclusive lock on it without
// waiting. etcd itself waits for ever on the locks of a directory another
// member uses, and would unlink that member's sockets.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("etcd: data directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("etcd: data directory %s: restricting it to mode 0700: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("etcd: data directory lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("etcd: data directory %s is in use by another process (it holds %s): stop it, or give this one another data directory", dir, path)
		}
		return nil, fmt.Errorf("etcd: locking %s: %w", path, err)
	}
	return f, nil
}

// checkDataDir looks for the damage on which etcd hangs or panics: a
// write-ahead log that is missing while the database exists, a log that
// does not read back, a database that is not one. Each error names the
// file and what to do. A log whose last record was cut short is no error
// (etcd drops that record: a write that never completed) but is logged,
// since the write it held, if it was acknowledged, is gone.
func checkDataDir(dir string, log *slog.Logger) error {
	walDir := filepath.Join(dir, "member", "wal")
	db := filepath.Join(dir, "member", "snap", "db")
	dbExists := exists(db)
	if !wal.Exist(walDir) {
		if dbExists {
			return fmt.Errorf("etcd: %s: the write-ahead log is missing but the database %s exists: restore the data directory from a backup, or move %s away to start empty",
				walDir, db, dir)
		}
		return nil // a new member
	}
	const what = "restore the data directory from a backup, or move %s away to start empty"
	last, torn, err := checkWALTail(walDir)
	if err != nil {
		return fmt.Errorf("%w: "+what, err, dir)
	}
	if torn != "" {
		log.Warn("etcd: the write-ahead log's last record was cut short; etcd drops it, and with it the write it held",
			"file", torn, "lastEntry", last, "droppedEntry", last+1)
	}
	if !dbExists {
		return nil // etcd rebuilds it from the log
	}
	applied, err := checkBolt(db)
	if err != nil {
		return fmt.Errorf("%w: "+what, err, dir)
	}
	if applied > last {
		// A member whose log lost its end has lost its membership too
		// and never elects itself: etcd waits for ever.
		return fmt.Errorf("etcd: write-ahead log %s ends at entry %d but the database %s has applied entry %d: the log was cut short: "+what,
			walDir, last, db, applied, dir)
	}
	return nil
}

// checkBolt opens the database read-only and checks it: its meta pages,
// its buckets, and (up to fullCheckBytes) every page. It returns the index
// of the last log entry the database has applied.
func checkBolt(path string) (applied uint64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("etcd: database %s: %w", path, err)
	}
	defer func() {
		// bbolt panics on some corrupt pages instead of returning errors.
		if r := recover(); r != nil {
			applied, err = 0, fmt.Errorf("etcd: database %s is damaged: %v", path, r)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, fmt.Errorf("etcd: database %s is damaged: %w", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range []string{"key", "meta"} {
			if tx.Bucket([]byte(name)) == nil {
				return fmt.Errorf("etcd: database %s is damaged: it has no %q bucket", path, name)
			}
		}
		// etcd's schema.UnsafeReadConsistentIndex: 8 bytes, big-endian.
		if v := tx.Bucket([]byte("meta")).Get([]byte("consistent_index")); len(v) == 8 {
			applied = binary.BigEndian.Uint64(v)
		}
		if fi.Size() > fullCheckBytes {
			return nil
		}
		var first error
		for cerr := range tx.Check() { // drained: Check's goroutine holds the transaction
			if first == nil {
				first = fmt.Errorf("etcd: database %s is damaged: %w", path, cerr)
			}
		}
		return first
	})
	return applied, err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
