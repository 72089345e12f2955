//go:build unix

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execProgram replaces the process by path with args, so that the program
// keeps strata's process id, standard streams and signals.
func execProgram(path string, args []string) error {
	argv := append([]string{path}, args...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	return nil // not reached
}
