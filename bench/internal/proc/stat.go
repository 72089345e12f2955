// Package proc starts, watches and stops the processes the bench measures,
// and reads their CPU time and memory from /proc.
package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// which is 100 on every Linux architecture Go supports (the kernel reports
// in it whatever its internal HZ).
const clockTick = 10 * time.Millisecond

// CPU is the CPU time (user + system, all threads, children not
// counted) that process pid has used, from /proc/PID/stat.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("proc: reading the CPU time of process %d: %w", pid, err)
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the numbered fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc: /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("proc: /proc/%d/stat: %d fields, want at least 15", pid, len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc: /proc/%d/stat: CPU field %q: %w", pid, s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// RSS is process pid's resident set size (VmRSS of /proc/PID/status)
// in bytes.
func RSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("proc: reading the RSS of process %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc: /proc/%d/status: VmRSS %q: %w", pid, v, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("proc: reading /proc/%d/status: %w", pid, err)
	}
	return 0, fmt.Errorf("proc: /proc/%d/status has no VmRSS", pid)
}
