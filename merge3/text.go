package merge3

import (
	"bytes"
	"fmt"
)

// maxTextCells bounds the LCS table of a text merge (lines × lines); larger
// files are merged whole, as one conflict when both sides changed them.
const maxTextCells = 4 << 20

// hunkConflict is an overlapping change both sides made to a text file.
type hunkConflict struct {
	origStart, origEnd int // lines of original, 1-based, inclusive (end < start: an insertion)
	upstream, local    []byte
}

// mergeLines merges text line by line (diff3): the lines original, upstream
// and local share are kept in place; between them, the side that changed a
// stretch wins, and a stretch both changed differently is a conflict, settled
// by takeUpstream. ok is false when the files are too large to align.
func mergeLines(o, u, l []byte, takeUpstream bool) (merged []byte, conflicts []hunkConflict, ok bool) {
	ol, ul, ll := splitLines(o), splitLines(u), splitLines(l)
	if len(ol)*len(ul) > maxTextCells || len(ol)*len(ll) > maxTextCells {
		return nil, nil, false
	}
	toU, toL := matchLines(ol, ul), matchLines(ol, ll)
	var out [][]byte
	oi, ui, li := 0, 0, 0
	for k := 0; k <= len(ol); k++ {
		// A sync point: an original line both sides kept (or the end).
		if k < len(ol) && (toU[k] < 0 || toL[k] < 0) {
			continue
		}
		ue, le := len(ul), len(ll)
		if k < len(ol) {
			ue, le = toU[k], toL[k]
		}
		oh, uh, lh := ol[oi:k], ul[ui:ue], ll[li:le]
		switch {
		case equalLines(uh, oh):
			out = append(out, lh...)
		case equalLines(lh, oh), equalLines(uh, lh):
			out = append(out, uh...)
		default:
			conflicts = append(conflicts, hunkConflict{oi + 1, k, bytes.Join(uh, nil), bytes.Join(lh, nil)})
			if takeUpstream {
				out = append(out, uh...)
			} else {
				out = append(out, lh...)
			}
		}
		if k < len(ol) {
			out = append(out, ol[k])
			oi, ui, li = k+1, ue+1, le+1
		}
	}
	return bytes.Join(out, nil), conflicts, true
}

// splitLines splits text after each newline, keeping the newlines.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b) - 1
		}
		lines = append(lines, b[:i+1])
		b = b[i+1:]
	}
	return lines
}

func equalLines(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// matchLines aligns a with b by a longest common subsequence and returns,
// for each line of a, the index of its partner in b or -1.
func matchLines(a, b [][]byte) []int {
	n, m := len(a), len(b)
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) *int32 { return &lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case bytes.Equal(a[i], b[j]):
				*at(i, j) = *at(i+1, j+1) + 1
			case *at(i+1, j) >= *at(i, j+1):
				*at(i, j) = *at(i+1, j)
			default:
				*at(i, j) = *at(i, j+1)
			}
		}
	}
	match := make([]int, n)
	for i := range match {
		match[i] = -1
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case bytes.Equal(a[i], b[j]):
			match[i] = j
			i, j = i+1, j+1
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
	return match
}

// describeLines names the original lines a text conflict covers.
func describeLines(c hunkConflict) string {
	if c.origEnd < c.origStart {
		return fmt.Sprintf("after line %d", c.origEnd)
	}
	if c.origEnd == c.origStart {
		return fmt.Sprintf("line %d", c.origStart)
	}
	return fmt.Sprintf("lines %d-%d", c.origStart, c.origEnd)
}
