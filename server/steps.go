package server

import (
	"context"
	"errors"
	"fmt"
)

// step is one stage of the server's start. start brings something up
// and, when it fails, leaves nothing of its own running; stop (nil when
// there is nothing to stop) takes down what start brought up.
type step struct {
	name  string
	start func(ctx context.Context) error
	stop  func(ctx context.Context) error
}

// sequence starts steps in order and stops the started ones in the
// reverse order, both when a later step fails and at shutdown, so that
// nothing stops while something started on top of it still runs.
type sequence struct {
	started []step
	// done, if set, is told each step's name once it has started (the
	// start clock).
	done func(name string)
}

// start runs the steps' starts in order, after those already started.
// When one fails it stops every step started so far, in reverse order,
// and returns the start's error (with any stop's).
func (s *sequence) start(ctx context.Context, steps ...step) error {
	for _, st := range steps {
		if err := st.start(ctx); err != nil {
			// ctx may be what ended the start: the stops still run.
			if stopErr := s.stop(context.WithoutCancel(ctx)); stopErr != nil {
				return errors.Join(err, stopErr)
			}
			return err
		}
		s.started = append(s.started, st)
		if s.done != nil {
			s.done(st.name)
		}
	}
	return nil
}

// stop stops the started steps in reverse order, each once. A stop that
// fails does not keep the steps below it running: every stop runs, and
// their errors are returned together.
func (s *sequence) stop(ctx context.Context) error {
	var errs []error
	for i := len(s.started) - 1; i >= 0; i-- {
		st := s.started[i]
		if st.stop == nil {
			continue
		}
		if err := st.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", st.name, err))
		}
	}
	s.started = nil
	return errors.Join(errs...)
}
