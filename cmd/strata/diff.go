package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/patchfile"
)

type diffFlags struct {
	current   string
	overwrite bool
	typ       string
	schemas   []string
	schemaDef string
	compat    string
	output    string
}

func newDiffCommand() *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff ORIGINAL MODIFIED",
		Short: "Print the patch that turns one configuration into another",
		Long: `Print the strategic merge patch that turns ORIGINAL into MODIFIED.

With --current, print the three-way patch kubectl apply sends: it deletes what
ORIGINAL (the last applied configuration) had and MODIFIED dropped, sets what
MODIFIED has and CURRENT (the live object) lacks or holds otherwise, and leaves
alone what only CURRENT has. With --overwrite=false, a change that would
overwrite another writer's change to CURRENT is a conflict: exit status 1 and
the list of conflicting paths.

--type merge prints a JSON merge patch instead. No difference prints {}.
Patches strata creates apply alike in strata's mode and in --compat
kubernetes; the flag is accepted so that scripts can pass the same flags to
patch and diff.`,
		Example: `  strata diff last-applied.yaml deployment.yaml
  strata diff last-applied.yaml deployment.yaml --current live.yaml --overwrite=false`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.current, "current", "", "the live object, for a three-way patch")
	fl.BoolVar(&f.overwrite, "overwrite", true, "let a three-way patch overwrite changes made to the live object")
	fl.StringVar(&f.typ, "type", "strategic", "patch type: strategic or merge")
	fl.StringArrayVar(&f.schemas, "schema", nil, "an OpenAPI v2/v3 document or CRD manifest describing the documents (repeatable)")
	fl.StringVar(&f.schemaDef, "schema-def", "", "the schema definition to use when the documents' apiVersion/kind does not name one")
	fl.StringVar(&f.compat, "compat", "", `"kubernetes": accepted for symmetry with strata patch`)
	fl.StringVarP(&f.output, "output", "o", "", "output format: yaml or json (default: ORIGINAL's)")
	return cmd
}

func (f diffFlags) check(cmd *cobra.Command) error {
	switch {
	case f.typ != string(patchfile.Strategic) && f.typ != string(patchfile.Merge):
		return usagef("--type %q: want strategic or merge", f.typ)
	case f.output != "" && f.output != "yaml" && f.output != "json":
		return usagef("-o %q: want yaml or json", f.output)
	case f.compat != "" && f.compat != "kubernetes":
		return usagef("--compat %q: the only compatibility mode is kubernetes", f.compat)
	case cmd.Flags().Changed("overwrite") && f.current == "":
		return usagef("--overwrite needs --current")
	}
	return nil
}

func runDiff(cmd *cobra.Command, args []string, f diffFlags) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	in := patchfile.DiffInput{Overwrite: f.overwrite, HasCurrent: f.current != ""}
	files := []string{args[0], args[1]}
	if in.HasCurrent {
		files = append(files, f.current)
	}
	var docs [3][]byte
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("reading %s: %w", file, err)
		}
		docs[i] = data
	}
	in.Original, in.Modified, in.Current = docs[0], docs[1], docs[2]
	opts := patchfile.Options{Type: patchfile.Type(f.typ), Output: patchfile.Format(f.output)}
	var err error
	if opts.Schema, err = schemaFunc(f.schemas, f.schemaDef); err != nil {
		return err
	}
	out, err := patchfile.Diff(in, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}
