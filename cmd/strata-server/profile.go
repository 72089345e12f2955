package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// profileStartEnv names the file prefix of a CPU profile (PREFIX.cpu) and
// an execution trace (PREFIX.trace) of the server's start, from the
// command's start to serving: where the start-up time goes (with
// "strata-bench startup", bench/README.md). Unset, nothing is recorded.
const profileStartEnv = "STRATA_PROFILE_START"

// profileStart starts the recording $STRATA_PROFILE_START asks for and
// returns what ends it.
func profileStart() (stop func(), err error) {
	prefix := os.Getenv(profileStartEnv)
	if prefix == "" {
		return func() {}, nil
	}
	cpu, err := os.Create(prefix + ".cpu")
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", profileStartEnv, err)
	}
	tr, err := os.Create(prefix + ".trace")
	if err != nil {
		cpu.Close()
		return nil, fmt.Errorf("$%s: %w", profileStartEnv, err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		tr.Close()
		return nil, fmt.Errorf("$%s: %w", profileStartEnv, err)
	}
	if err := trace.Start(tr); err != nil {
		pprof.StopCPUProfile()
		cpu.Close()
		tr.Close()
		return nil, fmt.Errorf("$%s: %w", profileStartEnv, err)
	}
	return func() {
		trace.Stop()
		pprof.StopCPUProfile()
		tr.Close()
		cpu.Close()
	}, nil
}
