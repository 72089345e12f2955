package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// runEnvList is "strata-bench envlist [-n N] DIR": it writes the env-list
// benchmark's inputs as files, a Pod whose one container has N env entries
// (pod.json) and the patch kubectl would send touching N/10 of them — half
// change a value, half add an entry — with the full $setElementOrder/env
// (patch.json). They are the inputs of strategicpatch's BenchmarkEnvList,
// inside a Pod so that "strata patch" finds the schema of the built-in
// kind; "strata-bench commands" writes and times them itself.
func runEnvList(_ context.Context, args []string, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata-bench envlist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10000, "env entries")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: strata-bench envlist [-n N] DIR")
		return 2
	}
	if err := writeEnvList(fs.Arg(0), *n); err != nil {
		fmt.Fprintln(stderr, "strata-bench envlist:", err)
		return 1
	}
	return 0
}

// writeEnvList writes pod.json and patch.json of n entries into dir.
func writeEnvList(dir string, n int) error {
	pod, patch := envListInputs(n)
	for name, data := range map[string][]byte{"pod.json": pod, "patch.json": patch} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// envListInputs builds the Pod and the patch, as strategicpatch's
// benchEnvList does for the container alone.
func envListInputs(n int) (pod, patch []byte) {
	var doc, p, order bytes.Buffer
	doc.WriteString(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app"},"spec":{"containers":[{"name":"app","image":"registry.example.com/app:1.0","env":[`)
	order.WriteString(`"$setElementOrder/env":[`)
	p.WriteString(`"env":[`)
	for i := range n {
		if i > 0 {
			doc.WriteByte(',')
			order.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"name":"VAR_%06d","value":"value-%d"}`, i, i)
		fmt.Fprintf(&order, `{"name":"VAR_%06d"}`, i)
		if i%10 != 0 {
			continue
		}
		k := i / 10
		if k > 0 {
			p.WriteByte(',')
		}
		if k%2 == 0 {
			fmt.Fprintf(&p, `{"name":"VAR_%06d","value":"changed-%d"}`, i, i)
		} else {
			fmt.Fprintf(&order, `,{"name":"NEW_%06d"}`, k)
			fmt.Fprintf(&p, `{"name":"NEW_%06d","value":"added-%d"}`, k, k)
		}
	}
	doc.WriteString("]}]}}\n")
	patch = []byte(`{"spec":{"containers":[{"name":"app",` + order.String() + `],` + p.String() + "]}]}}\n")
	return doc.Bytes(), patch
}
