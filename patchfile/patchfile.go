// Package patchfile applies a patch to the documents of a YAML or JSON file:
// it detects the file's format, picks each document's schema, runs the
// strategic merge patch engine (or a JSON patch or merge patch), and writes
// the result in the requested format. It is the library behind `strata patch`.
package patchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// Type is a kind of patch.
type Type string

// The patch types `strata patch --type` accepts.
const (
	Strategic Type = "strategic"
	Merge     Type = "merge" // RFC 7386 JSON merge patch
	JSONPatch Type = "json"  // RFC 6902 JSON patch
)

// Format is a file format.
type Format string

// The formats documents are read and written in.
const (
	YAML Format = "yaml"
	JSON Format = "json"
)

// SchemaFunc returns the schema for a document of the given apiVersion and
// kind, or nil when none is known.
type SchemaFunc func(apiVersion, kind string) schema.Type

// Options say how to apply a patch.
type Options struct {
	Type   Type
	Compat strategicpatch.Compat
	Schema SchemaFunc // nil: no schema information
	Output Format     // "" keeps the input's format
}

// DetectFormat tells JSON from YAML by the first non-blank byte.
func DetectFormat(data []byte) Format {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return JSON
	}
	return YAML
}

// Apply applies patch to every document in data and returns the result.
// Errors name the document (for multi-document YAML) and the path inside it.
func Apply(data, patch []byte, opts Options) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the document is empty")
	}
	if len(bytes.TrimSpace(patch)) == 0 {
		return nil, errors.New("the patch is empty")
	}
	in := DetectFormat(data)
	out := opts.Output
	if out == "" {
		out = in
	}
	if in == JSON {
		return applyJSONFile(data, patch, opts, out)
	}
	return applyYAMLFile(data, patch, opts, out)
}

func applyJSONFile(data, patch []byte, opts Options, out Format) ([]byte, error) {
	patchJSON, err := toJSON(patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	result, err := applyToJSON(data, patchJSON, opts)
	if err != nil {
		return nil, err
	}
	return render(result, out)
}

// applyToJSON applies a patch (as JSON) to one JSON document.
func applyToJSON(doc, patch []byte, opts Options) ([]byte, error) {
	switch opts.Type {
	case Merge:
		res, err := jsonpatch.MergePatch(doc, patch)
		if err != nil {
			return nil, fmt.Errorf("merge patch: %w", err)
		}
		return res, nil
	case JSONPatch:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, fmt.Errorf("JSON patch: %w", err)
		}
		res, err := p.Apply(doc)
		if err != nil {
			return nil, fmt.Errorf("JSON patch: %w", err)
		}
		return res, nil
	}
	return strategicpatch.ApplyJSON(doc, patch, schemaOfJSON(doc, opts.Schema), strategicpatch.Options{Compat: opts.Compat})
}

func schemaOfJSON(doc []byte, fn SchemaFunc) schema.Type {
	if fn == nil {
		return nil
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if json.Unmarshal(doc, &head) != nil {
		return nil
	}
	return fn(head.APIVersion, head.Kind)
}

// toJSON converts a YAML or JSON patch to JSON.
func toJSON(data []byte) ([]byte, error) {
	if DetectFormat(data) == JSON {
		return data, nil
	}
	if err := checkYAMLSyntax(data); err != nil {
		return nil, err
	}
	return sigsyaml.YAMLToJSON(data)
}

func checkYAMLSyntax(data []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("invalid YAML: %w", err)
	}
	return nil
}

// render writes a JSON result in the output format.
func render(result []byte, out Format) ([]byte, error) {
	if out == YAML {
		// JSON is YAML: parsed as nodes it keeps its key order.
		var n yaml.Node
		if err := yaml.Unmarshal(result, &n); err != nil {
			return nil, fmt.Errorf("writing YAML: %w", err)
		}
		blockStyle(&n, true)
		return encodeYAML(&n)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, result, "", "  "); err != nil {
		return nil, fmt.Errorf("writing JSON: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// readYAMLDocuments splits a YAML stream into its documents.
func readYAMLDocuments(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		docs = append(docs, &n)
	}
}
