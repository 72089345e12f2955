package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
)

// TestSubcommandDispatch: no subcommand or an unknown one is a usage
// error that lists the subcommands; help lists them and succeeds; a
// subcommand's -h succeeds.
func TestSubcommandDispatch(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "footprint"},
		{[]string{"nope"}, 2, `unknown subcommand "nope"`},
		{[]string{"help"}, 0, "serverload"},
		{[]string{"load", "-h"}, 0, "-concurrency"},
		{[]string{"startup", "-h"}, 0, "-starts"},
		{[]string{"footprint", "stray"}, 2, "unexpected arguments"},
		{[]string{"load", "-cpuprofile-side", "etcd"}, 2, "needs -cpuprofile"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestMeanSD: the sample standard deviation, as hyperfine reports it.
func TestMeanSD(t *testing.T) {
	mean, sd := meanSD([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if mean != 5 || math.Abs(sd-2.138) > 0.001 {
		t.Errorf("mean %v, sd %v; want 5 and 2.138", mean, sd)
	}
	if _, sd := meanSD([]float64{3}); sd != 0 {
		t.Errorf("one value: sd %v, want 0", sd)
	}
}
