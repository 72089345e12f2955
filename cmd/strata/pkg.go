package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/merge3"
	"github.com/stratadev/strata/pkgupdate"
)

func newPkgCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pkg",
		Short: "Fetch kpt packages from git, update them from upstream, and show local changes",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPkgGetCommand(), newPkgUpdateCommand(), newPkgDiffCommand())
	return cmd
}

func newPkgGetCommand() *cobra.Command {
	var strategy string
	cmd := &cobra.Command{
		Use:   "get REPO[/DIR][@REF] [DEST]",
		Short: "Fetch a package from a directory of a git repository",
		Long: `Fetch a directory of a git repository at a ref (branch, tag or commit; the
default branch when omitted) into a new package directory, as kpt pkg get does.

REPO is a local path, a file:// URL or a remote URL. A ".git" in the argument
ends the repository (https://host/org/repo.git/DIR@REF); local paths are split
at the enclosing repository; a GitHub page of a directory,
https://github.com/ORG/REPO/tree/REF/DIR, names its ref and directory. DEST defaults to DIR's base name and must not
exist or be an empty directory. The Kptfile records upstream and upstreamLock;
nested packages that declare an upstream are fetched too.

Exit status: 0 on success, 1 when fetching fails, 2 on a usage error.`,
		Example: `  strata pkg get ../catalog/wordpress@v1.2 wordpress
  strata pkg get https://github.com/org/catalog.git/apps/web@main
  strata pkg get https://github.com/org/catalog/tree/main/apps/web --strategy fast-forward`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runPkgGet(cmd, args, strategy) },
	}
	cmd.Flags().StringVar(&strategy, "strategy", "", "the update strategy written to the Kptfile (upstream.updateStrategy): resource-merge (default), fast-forward, force-delete-replace or copy-merge")
	return cmd
}

func runPkgGet(cmd *cobra.Command, args []string, strategy string) error {
	st, err := pkgupdate.ParseStrategy(strategy)
	if err != nil {
		return usagef("--strategy: %v", err)
	}
	spec, err := pkgupdate.ParseSpec(args[0])
	if err != nil {
		return err
	}
	dest := pathBase(spec)
	if len(args) == 2 {
		dest = args[1]
	}
	res, err := pkgupdate.Get(cmd.Context(), pkgupdate.GetOptions{Spec: spec, Dest: dest, Strategy: st})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "fetched %s@%s (%s) into %s\n", spec.Repo+strings.TrimSuffix(spec.Directory, "/"), res.Ref, shortSHA(res.Commit), dest)
	return nil
}

// pathBase is the default DEST: the directory's base name, or the
// repository's for the root.
func pathBase(s pkgupdate.Spec) string {
	if s.Directory != "/" {
		return filepath.Base(s.Directory)
	}
	return strings.TrimSuffix(filepath.Base(strings.TrimSuffix(s.Repo, "/")), ".git")
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

type pkgUpdateFlags struct {
	strategy   string
	onConflict string
	allowDirty bool
}

func newPkgUpdateCommand() *cobra.Command {
	var f pkgUpdateFlags
	cmd := &cobra.Command{
		Use:   "update [DIR][@REF]",
		Short: "Update a package from its upstream",
		Long: `Update the package in DIR (default: the current directory) from its upstream,
to REF or to the Kptfile's upstream.git.ref, as kpt pkg update does.

Strategies: resource-merge (default: three-way merge of original, upstream and
local; where both changed a field upstream wins and the conflict is reported),
fast-forward (refuses, listing the files, if local changed anything),
force-delete-replace (upstream's files replace local's; the Kptfile stays),
copy-merge (upstream's files over local's, local-only files kept). Nested
packages with their own upstream are added, deleted, merged and updated as
kpt does. The result is built beside the package and swapped in, so a failed
or interrupted update leaves the package as it was. A package with
uncommitted git changes is refused unless --allow-dirty.

Exit status: 0 on success, 1 when the update is refused or fails, 2 on a
usage error.`,
		Example: `  strata pkg update wordpress@v1.3
  strata pkg update wordpress --strategy fast-forward
  strata pkg update --on-conflict fail`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPkgUpdate(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.strategy, "strategy", "", "resource-merge, fast-forward, force-delete-replace or copy-merge (default: the Kptfile's updateStrategy, else resource-merge)")
	fl.StringVar(&f.onConflict, "on-conflict", "upstream", "when both sides changed a field: upstream (take it, report), local (keep local, report) or fail")
	fl.BoolVar(&f.allowDirty, "allow-dirty", false, "update even if the package has uncommitted git changes")
	return cmd
}

func (f pkgUpdateFlags) options(arg string) (pkgupdate.UpdateOptions, error) {
	opts := pkgupdate.UpdateOptions{Dir: ".", AllowDirty: f.allowDirty}
	if arg != "" {
		dir, ref, hasRef := strings.Cut(arg, "@")
		if hasRef && ref == "" {
			return opts, usagef("%s: empty ref after @", arg)
		}
		if dir != "" {
			opts.Dir = dir
		}
		opts.Ref = ref
	}
	if f.strategy != "" {
		s, err := pkgupdate.ParseStrategy(f.strategy)
		if err != nil {
			return opts, usagef("--strategy: %v", err)
		}
		opts.Strategy = s
	}
	switch p := merge3.ConflictPolicy(f.onConflict); p {
	case merge3.TakeUpstream, merge3.KeepLocal, merge3.Fail:
		opts.OnConflict = p
	default:
		return opts, usagef("--on-conflict %q: want upstream, local or fail", f.onConflict)
	}
	return opts, nil
}

func runPkgUpdate(cmd *cobra.Command, args []string, f pkgUpdateFlags) error {
	arg := ""
	if len(args) == 1 {
		arg = args[0]
	}
	opts, err := f.options(arg)
	if err != nil {
		return err
	}
	if opts.Schema, err = schemaFunc(nil, ""); err != nil {
		return err
	}
	res, err := pkgupdate.Update(cmd.Context(), opts)
	var ce *merge3.ConflictsError
	if errors.As(err, &ce) {
		for i := range ce.Conflicts {
			ce.Conflicts[i].Taken = "neither (--on-conflict fail)"
		}
		printConflicts(cmd.ErrOrStderr(), ce.Conflicts)
		return fmt.Errorf("%s: %d conflicting field(s); nothing changed", opts.Dir, len(ce.Conflicts))
	}
	if err != nil {
		return err
	}
	printConflicts(cmd.ErrOrStderr(), res.Conflicts)
	for _, k := range res.KeptDeleted {
		fmt.Fprintf(cmd.ErrOrStderr(), "kept: %s: deleted upstream but changed locally\n", k)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), n)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "updated %s to %s (%s)\n", opts.Dir, res.Ref, shortSHA(res.Commit))
	return nil
}

// printConflicts writes one line per conflict.
func printConflicts(w io.Writer, cs []merge3.Conflict) {
	for _, c := range cs {
		what := c.File
		if c.Resource != "" {
			what += ": " + c.Resource
		}
		fmt.Fprintf(w, "conflict: %s: %s: upstream %s, local %s; took %s\n", what, c.Path, c.Upstream, c.Local, c.Taken)
	}
}
