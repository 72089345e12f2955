package main

import "runtime/debug"

// startGCPercent is the collector's target (GOGC) while the server starts.
// A start loads every stored object into the watch caches: the heap grows
// from nothing to its working size, and at GOGC 100 each doubling is a
// collection that marks a heap which only grows. On a loaded data
// directory those collections are a large share of the start's CPU, and a
// higher target shortens the start to ready (measure it with
// "strata-bench startup"; bench/README.md).
const startGCPercent = 400

// relaxGCForStart raises the collector's target for the start, unless
// $GOGC sets it, and returns what restores it once the server serves: the
// previous target, and the start's garbage returned to the system at
// once, so that the server's memory is what it holds and not what its
// start left behind.
func relaxGCForStart(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(startGCPercent)
	return func() {
		debug.SetGCPercent(prev)
		debug.FreeOSMemory()
	}
}
