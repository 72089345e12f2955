package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/merge3"
	"github.com/stratadev/strata/pkgupdate"
)

type merge3Flags struct {
	original, upstream, local, output string
	onConflict                        string
}

func newMerge3Command() *cobra.Command {
	var f merge3Flags
	cmd := &cobra.Command{
		Use:   "merge3 --original DIR|FILE --upstream DIR|FILE --local DIR|FILE [--output DIR|FILE]",
		Short: "Three-way merge of resource packages or files, as kpt pkg update does",
		Long: `Merge upstream's changes (original → upstream) into local.

Resources are matched by group, kind, namespace and name, whichever file
holds them; their fields merge three-way, lists by their merge keys. Where
upstream and local changed one field differently, upstream wins (or local,
with --on-conflict=local; --on-conflict=fail stops and writes nothing); every
such conflict is printed on stderr. Local comments and formatting are kept.

Directories: without --output, local is updated in place (through a
temporary directory, so a failure leaves it as it was). Files: without
--output, the result is printed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMerge3(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.original, "original", "", "the upstream version local was forked from")
	fl.StringVar(&f.upstream, "upstream", "", "the new upstream version")
	fl.StringVar(&f.local, "local", "", "the local version, with its own changes")
	fl.StringVar(&f.output, "output", "", "where to write the result (default: local in place for directories, stdout for files)")
	fl.StringVar(&f.onConflict, "on-conflict", "upstream", "when both sides changed a field: upstream, local or fail")
	return cmd
}

func (f merge3Flags) check() error {
	if f.original == "" || f.upstream == "" || f.local == "" {
		return usagef("--original, --upstream and --local are all required")
	}
	switch merge3.ConflictPolicy(f.onConflict) {
	case merge3.TakeUpstream, merge3.KeepLocal, merge3.Fail:
		return nil
	}
	return usagef("--on-conflict %q: want upstream, local or fail", f.onConflict)
}

func runMerge3(cmd *cobra.Command, f merge3Flags) error {
	if err := f.check(); err != nil {
		return err
	}
	opts := merge3.Options{OnConflict: merge3.ConflictPolicy(f.onConflict)}
	info, err := os.Stat(f.local)
	if err != nil {
		return err
	}
	var report *merge3.Report
	if info.IsDir() {
		report, err = mergeDirs(f, opts)
	} else {
		report, err = mergeFiles(cmd.OutOrStdout(), f, opts)
	}
	printReport(cmd.ErrOrStderr(), report)
	return err
}

func mergeFiles(stdout io.Writer, f merge3Flags, opts merge3.Options) (*merge3.Report, error) {
	var data [3][]byte
	for i, file := range []string{f.original, f.upstream, f.local} {
		d, err := os.ReadFile(file)
		if err != nil && !(i < 2 && errors.Is(err, os.ErrNotExist)) {
			return nil, err
		}
		data[i] = d
	}
	out, report, err := merge3.Files(filepath.Base(f.local), data[0], data[1], data[2], opts)
	if err != nil {
		return report, err
	}
	if f.output == "" {
		_, err = stdout.Write(out)
		return report, err
	}
	return report, writeFileAtomic(f.output, out)
}

// mergeDirs merges into --output, or into local in place through
// pkgupdate's staged swap, so a failure leaves local as it was.
func mergeDirs(f merge3Flags, opts merge3.Options) (*merge3.Report, error) {
	if f.output != "" {
		return merge3.Dirs(f.original, f.upstream, f.local, f.output, opts)
	}
	local, err := filepath.Abs(f.local)
	if err != nil {
		return nil, err
	}
	var report *merge3.Report
	err = pkgupdate.ReplaceDir(local, func(newDir string) error {
		var err error
		report, err = merge3.Dirs(f.original, f.upstream, local, newDir, opts)
		return err
	})
	return report, err
}

func printReport(w io.Writer, r *merge3.Report) {
	if r == nil {
		return
	}
	for _, c := range r.Conflicts {
		where := c.File
		if c.Resource != "" {
			where += ": " + c.Resource
		}
		if c.Path != "" {
			where += ": " + c.Path
		}
		fmt.Fprintf(w, "conflict: %s: upstream %s, local %s; took %s\n", where, c.Upstream, c.Local, c.Taken)
	}
	for _, k := range r.KeptDeleted {
		fmt.Fprintf(w, "kept: %s was deleted upstream but changed locally\n", k)
	}
}
