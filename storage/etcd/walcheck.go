package etcd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// checkWAL reads the whole log back, checking what etcd checks when it
// opens it — each record's checksum, the chain of checksums across files,
// equal metadata, a committed snapshot record to start from, and entries
// after it without a gap — and returns the index of its last entry (or of
// its last committed state or snapshot, when later).
//
// It reads the log once. etcd's own functions would read it twice
// (wal.ValidSnapshotEntries for the snapshot to start from, then
// WAL.ReadAll from it), and reading the log is a sizeable share of a
// loaded start (bench/README.md). The entries are not kept,
// only their indices: which of them follow the snapshot to start from is
// known only at the end, from the last committed state.
func checkWAL(walDir string) (last uint64, err error) {
	last, _, err = checkWALTail(walDir)
	return last, err
}

// checkWALTail is checkWAL that also names the log file whose last record
// was cut short ("" when none was): a write that never completed, which
// etcd drops when it repairs the log.
func checkWALTail(walDir string) (last uint64, torn string, err error) {
	defer func() {
		// The decoder and etcd's unmarshalling panic on some malformed
		// records.
		if r := recover(); r != nil {
			last, torn, err = 0, "", fmt.Errorf("etcd: write-ahead log %s is damaged: %v", walDir, r)
		}
	}()
	damaged := func(err error) error { return fmt.Errorf("etcd: write-ahead log %s is damaged: %w", walDir, err) }
	files, firstIndex, err := openWALFiles(walDir)
	if err != nil {
		return 0, "", err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	readers := make([]fileutil.FileReader, len(files))
	for i, f := range files {
		readers[i] = fileutil.NewFileReader(f)
	}
	l, err := readLog(wal.NewDecoder(readers...))
	if err == nil {
		last, err = l.lastIndex(firstIndex)
	}
	if err != nil {
		return 0, "", damaged(err)
	}
	if l.torn && len(files) > 0 {
		torn = files[len(files)-1].Name()
	}
	return last, torn, nil
}

// walLog is what checkWAL keeps of a log: its snapshot records, its last
// hard state and the index of each entry record, in the log's order.
type walLog struct {
	snaps   []*walpb.Snapshot
	state   raftpb.HardState
	entries []uint64
	// torn: the last record was cut short.
	torn bool
}

// readLog reads every record dec holds, checking checksums and metadata.
// A record cut short at the end is a write that never completed, as etcd
// takes it.
func readLog(dec wal.Decoder) (*walLog, error) {
	l := &walLog{}
	var metadata []byte
	rec := &walpb.Record{}
	var err error
	for err = dec.Decode(rec); err == nil; err = dec.Decode(rec) {
		switch rec.GetType() {
		case wal.EntryType:
			index, err := entryIndex(rec.Data)
			if err != nil {
				return nil, err
			}
			l.entries = append(l.entries, index)
		case wal.StateType:
			l.state = *wal.MustUnmarshalState(rec.Data)
		case wal.MetadataType:
			if metadata != nil && !bytes.Equal(metadata, rec.Data) {
				return nil, wal.ErrMetadataConflict
			}
			metadata = rec.Data
		case wal.CrcType:
			if crc := dec.LastCRC(); crc != 0 && rec.Validate(crc) != nil {
				return nil, wal.ErrCRCMismatch
			}
			dec.UpdateCRC(rec.GetCrc())
		case wal.SnapshotType:
			snap := &walpb.Snapshot{}
			if err := proto.Unmarshal(rec.Data, snap); err != nil {
				return nil, fmt.Errorf("a snapshot record: %w", err)
			}
			l.snaps = append(l.snaps, snap)
		default:
			return nil, fmt.Errorf("a record of unknown type %d", rec.GetType())
		}
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	l.torn = errors.Is(err, io.ErrUnexpectedEOF)
	return l, nil
}

// entryIndexField is raftpb.Entry's Index field.
const entryIndexField = 3

// entryIndex reads the index of the raftpb.Entry message b as
// proto.Unmarshal would (the last occurrence wins; a field of another wire
// type is unknown, and skipped), without decoding the rest: etcd's
// MustUnmarshalEntry copies each entry's data, which was most of the
// check's time.
func entryIndex(b []byte) (uint64, error) {
	var index uint64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, fmt.Errorf("an entry record: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num == entryIndexField && typ == protowire.VarintType {
			index, n = protowire.ConsumeVarint(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return 0, fmt.Errorf("an entry record: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return index, nil
}

// lastIndex replays what WAL.ReadAll does from the newest committed
// snapshot record: it reads from the last file whose name's index is at
// most the snapshot's (firstIndex is the first file's), entries after the
// snapshot must follow on without a gap (a later entry may replace earlier
// ones from its index on), and the last one read is the log's last entry.
func (l *walLog) lastIndex(firstIndex uint64) (uint64, error) {
	var start *walpb.Snapshot
	for _, s := range l.snaps {
		if s.GetIndex() <= l.state.GetCommit() {
			start = s
		}
	}
	if start == nil {
		return 0, errors.New("it holds no committed snapshot record")
	}
	if start.GetIndex() < firstIndex {
		// A snapshot is written after the entries it covers, maybe into a
		// later file than theirs; etcd keeps their file until a later
		// snapshot, and opens the log there.
		return 0, fmt.Errorf("its newest committed snapshot is of entry %d, before its first file (from entry %d): %w",
			start.GetIndex(), firstIndex, wal.ErrFileNotFound)
	}
	for _, s := range l.snaps {
		if s.GetIndex() == start.GetIndex() && s.GetTerm() != start.GetTerm() {
			return 0, fmt.Errorf("%w at index %d", wal.ErrSnapshotMismatch, s.GetIndex())
		}
	}
	held := uint64(0) // entries after start that ReadAll would hold
	for _, i := range l.entries {
		if i <= start.GetIndex() {
			continue
		}
		if offset := i - start.GetIndex() - 1; offset > held {
			return 0, fmt.Errorf("entry %d follows entry %d: %w", i, start.GetIndex()+held, wal.ErrSliceOutOfRange)
		}
		held = i - start.GetIndex()
	}
	return max(l.state.GetCommit(), start.GetIndex(), start.GetIndex()+held), nil
}

// openWALFiles opens, in order, the files etcd reads as the log: those
// named as it names them (sequence-index.wal), with sequence numbers that
// follow on. None is an empty log, which holds no snapshot record. It
// returns the first file's index too, the first entry it may hold.
func openWALFiles(walDir string) (files []*os.File, firstIndex uint64, err error) {
	entries, err := os.ReadDir(walDir)
	if err != nil {
		return nil, 0, fmt.Errorf("etcd: write-ahead log %s: %w", walDir, err)
	}
	var names []string
	var seqs []uint64
	var firstSeq uint64
	for _, e := range entries {
		var seq, index uint64
		if !strings.HasSuffix(e.Name(), ".wal") {
			continue
		}
		if _, err := fmt.Sscanf(e.Name(), "%016x-%016x.wal", &seq, &index); err != nil {
			continue // etcd ignores it too
		}
		if len(seqs) == 0 || seq < firstSeq {
			firstSeq, firstIndex = seq, index
		}
		names, seqs = append(names, e.Name()), append(seqs, seq)
	}
	slices.Sort(names) // fixed-width hexadecimal: by sequence
	slices.Sort(seqs)
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			return nil, 0, fmt.Errorf("etcd: write-ahead log %s is damaged: file %d of its sequence is missing", walDir, seqs[i-1]+1)
		}
	}
	files = make([]*os.File, 0, len(names))
	for _, name := range names {
		f, err := os.Open(filepath.Join(walDir, name))
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, 0, fmt.Errorf("etcd: write-ahead log %s: %w", walDir, err)
		}
		files = append(files, f)
	}
	return files, firstIndex, nil
}
