package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/internal/atomicfile"
	"github.com/stratadev/strata/patchfile"
	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/schema/builtin"
	"github.com/stratadev/strata/strategicpatch"
)

type patchFlags struct {
	file      string
	patch     string
	patchFile string
	typ       string
	schemas   []string
	schemaDef string
	compat    string
	output    string
	inPlace   bool
}

func newPatchCommand() *cobra.Command {
	var f patchFlags
	cmd := &cobra.Command{
		Use:   "patch -f FILE (-p PATCH | --patch-file FILE)",
		Short: "Apply a strategic merge, JSON merge or JSON patch to a YAML or JSON file",
		Long: `Apply a patch to every document of a YAML or JSON file and print the result.

Strategic merge patches (the default) merge lists by their merge keys and obey
the $patch, $setElementOrder, $deleteFromPrimitiveList and $retainKeys
directives. Built-in Kubernetes kinds need no schema; other documents take one
from --schema (an OpenAPI v2 or v3 document, or a CRD manifest). On YAML files
comments, key order and quoting survive a strategic merge patch.

Exit status: 0 on success, 1 when the document or patch is rejected, 2 on a
usage error.`,
		Example: `  strata patch -f deployment.yaml -p '{"spec":{"replicas":3}}'
  strata patch -f deployment.yaml --patch-file env-patch.yaml --in-place
  strata patch -f widget.yaml --patch-file p.yaml --schema widget-crd.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPatch(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "filename", "f", "", "the YAML or JSON file to patch (- for standard input)")
	fl.StringVarP(&f.patch, "patch", "p", "", "the patch, as YAML or JSON text")
	fl.StringVar(&f.patchFile, "patch-file", "", "a file holding the patch")
	fl.StringVar(&f.typ, "type", "strategic", "patch type: strategic, merge or json")
	fl.StringArrayVar(&f.schemas, "schema", nil, "an OpenAPI v2/v3 document or CRD manifest describing the documents (repeatable)")
	fl.StringVar(&f.schemaDef, "schema-def", "", "the schema definition to use when the documents' apiVersion/kind does not name one")
	fl.StringVar(&f.compat, "compat", "", `"kubernetes" to reproduce apimachinery's results exactly`)
	fl.StringVarP(&f.output, "output", "o", "", "output format: yaml or json (default: the input's)")
	fl.BoolVar(&f.inPlace, "in-place", false, "write the result back to the file instead of printing it")
	return cmd
}

func (f patchFlags) check() error {
	switch {
	case f.file == "":
		return usagef("-f FILE is required")
	case f.patch == "" && f.patchFile == "":
		return usagef("give the patch with -p PATCH or --patch-file FILE")
	case f.patch != "" && f.patchFile != "":
		return usagef("give the patch with -p or --patch-file, not both")
	case f.inPlace && f.file == "-":
		return usagef("--in-place needs a file, not standard input")
	case f.inPlace && f.output != "":
		return usagef("--in-place keeps the file's format; drop -o")
	}
	switch patchfile.Type(f.typ) {
	case patchfile.Strategic, patchfile.Merge, patchfile.JSONPatch:
	default:
		return usagef("--type %q: want strategic, merge or json", f.typ)
	}
	switch f.output {
	case "", "yaml", "json":
	default:
		return usagef("-o %q: want yaml or json", f.output)
	}
	if f.compat != "" && f.compat != "kubernetes" {
		return usagef("--compat %q: the only compatibility mode is kubernetes", f.compat)
	}
	return nil
}

func runPatch(cmd *cobra.Command, f patchFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	doc, err := readInput(cmd.InOrStdin(), f.file)
	if err != nil {
		return err
	}
	patch, patchName := []byte(f.patch), "patch"
	if f.patchFile != "" {
		if patch, err = os.ReadFile(f.patchFile); err != nil {
			return fmt.Errorf("reading the patch: %w", err)
		}
		patchName = f.patchFile
	}
	opts := patchfile.Options{Type: patchfile.Type(f.typ), Output: patchfile.Format(f.output)}
	if f.compat == "kubernetes" {
		opts.Compat = strategicpatch.Kubernetes
	}
	if opts.Schema, err = schemaFunc(f.schemas, f.schemaDef); err != nil {
		return err
	}
	out, err := patchfile.Apply(doc, patch, opts)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", displayName(f.file), patchName, err)
	}
	if f.inPlace {
		return writeFileAtomic(f.file, out)
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

func displayName(file string) string {
	if file == "-" {
		return "(stdin)"
	}
	return file
}

func readInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the document: %w", err)
	}
	return data, nil
}

// schemaFunc picks a document's schema: --schema-def if given, else the
// --schema documents by apiVersion/kind, else the built-in Kubernetes kinds.
func schemaFunc(files []string, def string) (patchfile.SchemaFunc, error) {
	set, err := schema.LoadFiles(files...)
	if err != nil {
		return nil, err
	}
	var byName schema.Type
	if def != "" {
		t, ok := set.ByName(def)
		if !ok {
			return nil, usagef("--schema-def %q: no such definition in the --schema documents", def)
		}
		byName = t
	}
	return func(apiVersion, kind string) schema.Type {
		if byName != nil {
			return byName
		}
		group, version := schema.ParseAPIVersion(apiVersion)
		if t, ok := set.ForGVK(group, version, kind); ok {
			return t
		}
		if t, ok := builtin.ForKind(apiVersion, kind); ok {
			return t
		}
		return nil
	}, nil
}

// writeFileAtomic replaces an existing file with data, keeping its mode,
// so a failure never leaves a half-written file.
func writeFileAtomic(file string, data []byte) error {
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	return atomicfile.Write(file, data, info.Mode().Perm())
}
