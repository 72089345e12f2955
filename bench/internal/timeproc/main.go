// Command timeproc runs a command and prints, on its stderr's last line,
// the command's wall time, CPU time (user + system) and peak RSS:
//
//	timeproc COMMAND [ARG...]
//	... "timeproc: wall_ns cpu_ns maxrss_kb"
//
// "strata-bench commands" times each process through it, as GNU time is
// used: a process's peak RSS (ru_maxrss) counts the memory of the process
// that started it, up to its exec, so the starter must be small. This one
// is a small Go program; strata-bench, which links Kubernetes, is not.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: timeproc COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "timeproc:", err)
		os.Exit(1)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "timeproc: no resource usage")
		os.Exit(1)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	fmt.Fprintf(os.Stderr, "timeproc: %d %d %d\n", wall.Nanoseconds(), cpu.Nanoseconds(), ru.Maxrss)
}
