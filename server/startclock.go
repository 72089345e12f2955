package server

import (
	"log/slog"
	"time"
)

// processStart approximates when the process started (package
// initialisation), so that the start-up steps' times include what came
// before Start.
var processStart = time.Now()

// startClock logs, at debug level, when each step of the start ended and
// how long it took: where the time to ready goes (--log-level debug shows
// it).
type startClock struct {
	log  *slog.Logger
	last time.Time
}

func newStartClock(log *slog.Logger) *startClock {
	return &startClock{log: log, last: processStart}
}

// step records that the step called name has just ended.
func (c *startClock) step(name string) {
	now := time.Now()
	c.log.Debug("start-up step done", "step", name, "took", now.Sub(c.last).Round(time.Millisecond),
		"sinceStart", now.Sub(processStart).Round(time.Millisecond))
	c.last = now
}
