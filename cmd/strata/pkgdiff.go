package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/pkgupdate"
)

func newPkgDiffCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "diff [DIR][@REF]",
		Short: "Show a package's local changes against its upstream",
		Long: `Show the local changes of the package in DIR (default: the current directory)
as a unified diff (diff -r -u) from its upstream at the commit of the Kptfile's
upstreamLock — or at REF — to the local files, as kpt pkg diff's default diff
type (local) shows them. The upstream is staged as pkg get would have written
it, so an unchanged package prints nothing. Needs the diff program.

Exit status: 0 whether or not there are changes, 1 when fetching or diffing
fails, 2 on a usage error.`,
		Example: `  strata pkg diff wordpress
  strata pkg diff wordpress@v1.3`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := pkgupdate.DiffOptions{Dir: "."}
			if len(args) == 1 {
				dir, ref, hasRef := strings.Cut(args[0], "@")
				if hasRef && ref == "" {
					return usagef("%s: empty ref after @", args[0])
				}
				if dir != "" {
					opts.Dir = dir
				}
				opts.Ref = ref
			}
			_, err := pkgupdate.Diff(cmd.Context(), opts, cmd.OutOrStdout())
			return err
		},
	}
}
