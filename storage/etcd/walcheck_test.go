package etcd

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// checkWALTwoPass is the check as etcd's own functions make it, reading
// the log twice: the reference checkWAL must agree with.
func checkWALTwoPass(walDir string) (last uint64, err error) {
	defer func() {
		if r := recover(); r != nil {
			last, err = 0, errPanicked
		}
	}()
	lg := zap.NewNop()
	snaps, err := wal.ValidSnapshotEntries(lg, walDir)
	if err != nil {
		return 0, err
	}
	if len(snaps) == 0 {
		return 0, errNoSnapshot
	}
	w, err := wal.OpenForRead(lg, walDir, snaps[len(snaps)-1])
	if err != nil {
		return 0, err
	}
	defer w.Close()
	_, state, ents, err := w.ReadAll()
	if err != nil {
		return 0, err
	}
	last = max(state.GetCommit(), snaps[len(snaps)-1].GetIndex())
	if n := len(ents); n > 0 {
		last = max(last, ents[n-1].GetIndex())
	}
	return last, nil
}

type testError string

func (e testError) Error() string { return string(e) }

const (
	errPanicked   testError = "panicked"
	errNoSnapshot testError = "no snapshot"
)

// walStep is one write to a synthetic log.
type walStep struct {
	snap    *walpb.Snapshot // SaveSnapshot
	commit  uint64          // Save: the hard state's commit, and entries
	entries [][2]uint64     // index, term
}

func entries(from, to, term uint64) [][2]uint64 {
	var es [][2]uint64
	for i := from; i <= to; i++ {
		es = append(es, [2]uint64{i, term})
	}
	return es
}

func snapAt(index, term uint64) *walpb.Snapshot {
	return &walpb.Snapshot{Index: new(index), Term: new(term), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}
}

// writeWAL writes a log of steps with etcd's WAL and returns its directory.
func writeWAL(t *testing.T, steps []walStep) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wal")
	w, err := wal.Create(zap.NewNop(), dir, []byte("metadata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.snap != nil {
			must(t, w.SaveSnapshot(s.snap))
			continue
		}
		var ents []*raftpb.Entry
		for _, e := range s.entries {
			ents = append(ents, &raftpb.Entry{Index: new(e[0]), Term: new(e[1]), Type: new(raftpb.EntryNormal), Data: []byte("some data of the entry")})
		}
		must(t, w.Save(&raftpb.HardState{Term: new(uint64(3)), Commit: new(s.commit)}, ents))
	}
	must(t, w.Close())
	return dir
}

// writeWALFiles writes a log of steps as writeWAL does, cutting a new
// file once one holds segmentBytes, and removes the first drop files (as
// etcd purges the files a snapshot has made unnecessary). It returns the
// directory.
func writeWALFiles(t *testing.T, segmentBytes int64, drop int, steps []walStep) string {
	t.Helper()
	defer func(was int64) { wal.SegmentSizeBytes = was }(wal.SegmentSizeBytes)
	wal.SegmentSizeBytes = segmentBytes
	dir := writeWAL(t, steps)
	files, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil || len(files) <= drop {
		t.Fatalf("WAL files of %s: %v, %v; want more than %d", dir, files, err, drop)
	}
	for _, f := range files[:drop] {
		must(t, os.Remove(f))
	}
	return dir
}

// TestCheckWALAsEtcdReadsIt: on logs etcd wrote (synthetic ones with
// several snapshot records, replaced entries and a gap, in one file or
// several, some of them purged, and a member's), intact and then cut at
// every 61st byte or with a byte changed at every 97th (of what was
// written), the one-pass check finds the same last index as etcd's two
// passes, and fails where they fail.
func TestCheckWALAsEtcdReadsIt(t *testing.T) {
	// Entries of 22 bytes of data take about 50 bytes of log: 1 KiB
	// files hold about 20 of them.
	const segment = 1 << 10
	severalSnapshots := []walStep{
		{commit: 20, entries: entries(1, 30, 2)}, {snap: snapAt(15, 2)},
		{commit: 40, entries: entries(31, 45, 2)}, {snap: snapAt(40, 2)},
		{commit: 70, entries: entries(46, 80, 2)}, {snap: snapAt(70, 2)},
		{commit: 90, entries: entries(81, 95, 2)},
	}
	// The snapshot of entry 45 is written after the file holding it was
	// cut: etcd reads the log from that file, and cannot once it is gone.
	snapshotBehind := []walStep{
		{commit: 40, entries: entries(1, 50, 2)}, {snap: snapAt(45, 2)},
		{commit: 55, entries: entries(51, 60, 2)},
	}
	logs := []struct {
		name  string
		dir   string
		want  uint64 // intact: its last index (0: not asserted)
		fails bool   // intact: the check fails
	}{
		{"snapshots, some not committed", writeWAL(t, []walStep{
			{commit: 20, entries: entries(1, 30, 2)}, {snap: snapAt(15, 2)},
			{commit: 40, entries: entries(31, 45, 2)}, {snap: snapAt(40, 2)}, {snap: snapAt(44, 2)},
		}), 45, false},
		{"entries replaced from an earlier index", writeWAL(t, []walStep{
			{commit: 5, entries: entries(1, 10, 2)}, {commit: 6, entries: entries(7, 8, 3)},
		}), 8, false},
		{"a gap after the snapshot", writeWAL(t, []walStep{
			{commit: 5, entries: entries(1, 5, 2)}, {commit: 5, entries: entries(8, 9, 2)},
		}), 0, true},
		{"a member's", filepath.Join(populated(t), "member", "wal"), 0, false},
		{"several files", writeWALFiles(t, segment, 0, severalSnapshots), 95, false},
		{"several files, the first purged", writeWALFiles(t, segment, 1, severalSnapshots), 95, false},
		{"several files, the newest snapshot's first file purged", writeWALFiles(t, segment, 1, snapshotBehind), 0, true},
		{"several files, the newest snapshot's first file kept", writeWALFiles(t, segment, 0, snapshotBehind), 60, false},
	}
	for _, l := range logs {
		dir := l.dir
		t.Run(l.name, func(t *testing.T) {
			if got, err := checkWAL(dir); (l.want != 0 && got != l.want) || (err != nil) != l.fails {
				t.Errorf("intact: checkWAL = %d, %v; want %d, failing %t", got, err, l.want, l.fails)
			}
			compareChecks(t, "intact", dir)
			files, err := filepath.Glob(filepath.Join(dir, "*.wal"))
			if err != nil || len(files) == 0 {
				t.Fatalf("WAL files of %s: %v, %v", dir, files, err)
			}
			for _, file := range files {
				damageEach(t, dir, file)
			}
		})
	}
}

// damageEach cuts file at every 61st byte and changes every 97th byte of
// it, one at a time, comparing the checks of dir each time, and then
// restores it.
func damageEach(t *testing.T, dir, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { must(t, os.WriteFile(file, data, 0o600)) }()
	// etcd preallocates the file (a segment of zeros): only what was
	// written is cut or changed.
	written := data[:min(len(data), len(bytes.TrimRight(data, "\x00"))+8)]
	name := filepath.Base(file)
	for cut := 0; cut < len(written); cut += 61 {
		must(t, os.WriteFile(file, written[:cut], 0o600))
		compareChecks(t, name+" cut at "+strconv.Itoa(cut), dir)
	}
	for at := 0; at < len(written); at += 97 {
		changed := append([]byte(nil), written...)
		changed[at] ^= 0x5a
		must(t, os.WriteFile(file, changed, 0o600))
		compareChecks(t, name+" byte "+strconv.Itoa(at)+" changed", dir)
	}
}

func compareChecks(t *testing.T, what, dir string) {
	t.Helper()
	want, wantErr := checkWALTwoPass(dir)
	got, err := checkWAL(dir)
	if (err == nil) != (wantErr == nil) || got != want {
		t.Errorf("%s: checkWAL = %d, %v; etcd's two passes: %d, %v", what, got, err, want, wantErr)
	}
}

// BenchmarkCheckWAL checks a log of 20,000 entries of 1.4 KB (a member
// after 20,000 ConfigMaps of 1 KiB) in one pass and, for comparison, as
// etcd's own functions read it, twice.
func BenchmarkCheckWAL(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "wal")
	w, err := wal.Create(zap.NewNop(), dir, []byte("metadata"))
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 1400)
	for from := uint64(1); from <= 20000; from += 1000 {
		ents := make([]*raftpb.Entry, 0, 1000)
		for i := from; i < from+1000; i++ {
			ents = append(ents, &raftpb.Entry{Index: new(i), Term: new(uint64(2)), Type: new(raftpb.EntryNormal), Data: data})
		}
		if err := w.Save(&raftpb.HardState{Term: new(uint64(2)), Commit: new(from + 999)}, ents); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		check func(string) (uint64, error)
	}{{"one-pass", checkWAL}, {"etcd-two-passes", checkWALTwoPass}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if last, err := c.check(dir); err != nil || last != 20000 {
					b.Fatalf("%d, %v", last, err)
				}
			}
		})
	}
}

// TestEntryIndex: the index entryIndex reads is the one etcd decodes, for
// entries as etcd encodes them and with fields reordered, repeated,
// unknown or of another wire type; a message cut short is an error.
func TestEntryIndex(t *testing.T) {
	encoded, err := proto.Marshal(&raftpb.Entry{Index: new(uint64(1 << 40)), Term: new(uint64(7)),
		Type: new(raftpb.EntryConfChange), Data: []byte("data")})
	if err != nil {
		t.Fatal(err)
	}
	var (
		index3  = protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 99)
		index4  = protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 5)
		data    = protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), []byte("x"))
		unknown = protowire.AppendBytes(protowire.AppendTag(nil, 9, protowire.BytesType), []byte("y"))
		fixed   = protowire.AppendFixed64(protowire.AppendTag(nil, 3, protowire.Fixed64Type), 12)
	)
	for name, b := range map[string][]byte{
		"as etcd encodes it":    encoded,
		"data first":            append(append([]byte(nil), data...), index3...),
		"index repeated":        append(append([]byte(nil), index3...), index4...),
		"unknown field":         append(append([]byte(nil), unknown...), index3...),
		"index of another type": append(append([]byte(nil), index3...), fixed...),
		"no index":              data,
		"empty":                 nil,
	} {
		want := wal.MustUnmarshalEntry(b).GetIndex()
		if got, err := entryIndex(b); err != nil || got != want {
			t.Errorf("%s: entryIndex = %d, %v; etcd decodes %d", name, got, err, want)
		}
	}
	for _, cut := range []int{1, 3, len(encoded) - 1} {
		if _, err := entryIndex(encoded[:cut]); err == nil {
			t.Errorf("cut at %d of %d bytes: no error", cut, len(encoded))
		}
		if err := proto.Unmarshal(encoded[:cut], &raftpb.Entry{}); err == nil {
			t.Errorf("cut at %d: proto.Unmarshal takes it, the test's premise is wrong", cut)
		}
	}
}
