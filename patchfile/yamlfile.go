package patchfile

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// applyYAMLFile patches each document of a YAML stream. Strategic patches
// work on the yaml.Node trees, keeping comments and key order; JSON and merge
// patches go through JSON, so comments do not survive them.
func applyYAMLFile(data, patch []byte, opts Options, out Format) ([]byte, error) {
	docs, err := readYAMLDocuments(data)
	if err != nil {
		return nil, err
	}
	var results [][]byte
	for i, doc := range docs {
		res, err := applyYAMLDocument(doc, patch, opts, out)
		if err != nil {
			if len(docs) > 1 {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			return nil, err
		}
		results = append(results, res)
	}
	if out == JSON {
		return bytes.Join(results, nil), nil
	}
	return bytes.Join(results, []byte("---\n")), nil
}

func applyYAMLDocument(doc *yaml.Node, patch []byte, opts Options, out Format) ([]byte, error) {
	if opts.Type != Strategic && opts.Type != "" {
		docJSON, err := nodeToJSON(doc)
		if err != nil {
			return nil, err
		}
		patchJSON, err := toJSON(patch)
		if err != nil {
			return nil, fmt.Errorf("patch: %w", err)
		}
		res, err := applyToJSON(docJSON, patchJSON, opts)
		if err != nil {
			return nil, err
		}
		return render(res, out)
	}
	var p yaml.Node
	if err := yaml.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("patch: invalid YAML: %w", err)
	}
	// What the patch adds reads as ordinary block YAML, whether the patch was
	// written as JSON or as a one-line flow mapping.
	blockStyle(&p, DetectFormat(patch) == JSON)
	res, err := strategicpatch.ApplyYAML(doc, &p, schemaOfYAML(doc, opts.Schema), strategicpatch.Options{Compat: opts.Compat})
	if err != nil {
		return nil, err
	}
	if out == JSON {
		j, err := nodeToJSON(res)
		if err != nil {
			return nil, err
		}
		return render(j, JSON)
	}
	return encodeYAML(res)
}

func schemaOfYAML(doc *yaml.Node, fn SchemaFunc) schema.Type {
	if fn == nil {
		return nil
	}
	var head struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
	}
	if doc.Decode(&head) != nil {
		return nil
	}
	return fn(head.APIVersion, head.Kind)
}

func nodeToJSON(n *yaml.Node) ([]byte, error) {
	y, err := encodeYAML(n)
	if err != nil {
		return nil, err
	}
	j, err := sigsyaml.YAMLToJSON(y)
	if err != nil {
		return nil, fmt.Errorf("converting to JSON: %w", err)
	}
	return j, nil
}

func encodeYAML(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("writing YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// blockStyle clears the flow style of maps and lists and, with scalars set
// (JSON's quotes carry no intent), the quoting of scalars, leaving the encoder
// to quote only the strings that need it.
func blockStyle(n *yaml.Node, scalars bool) {
	if n.Kind != yaml.ScalarNode || scalars {
		n.Style = 0
	}
	for _, c := range n.Content {
		blockStyle(c, scalars)
	}
}
