package patchfile

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/strategicpatch"
)

// DiffInput is what `strata diff` compares: the last applied configuration,
// the new one, and optionally the live object.
type DiffInput struct {
	Original, Modified, Current []byte
	HasCurrent                  bool
	// Overwrite lets a three-way patch overwrite other writers' changes;
	// without it such a change is a *strategicpatch.ConflictError.
	Overwrite bool
}

// Diff creates the patch from in.Original to in.Modified (three-way against
// in.Current when given) in the format of the original document, or
// opts.Output. Strategic patches of YAML documents keep the modified
// document's key comments. No difference gives an empty map.
func Diff(in DiffInput, opts Options) ([]byte, error) {
	if !in.HasCurrent {
		in.Current = in.Original
	}
	format := DetectFormat(in.Original)
	out := opts.Output
	if out == "" {
		out = format
	}
	if opts.Type == Merge {
		return mergeDiff(in, out)
	}
	if format == YAML {
		return yamlDiff(in, opts, out)
	}
	docs, err := jsonDocuments(in)
	if err != nil {
		return nil, err
	}
	t := schemaOfJSON(docs[1], opts.Schema)
	if t == nil {
		t = schemaOfJSON(docs[0], opts.Schema)
	}
	patch, err := strategicpatch.CreateThreeWay(docs[0], docs[1], docs[2], t, in.Overwrite || !in.HasCurrent)
	if err != nil {
		return nil, err
	}
	return render(patch, out)
}

var docNames = [3]string{"original", "modified", "current"}

// jsonDocuments converts the three inputs to JSON, whatever their format.
func jsonDocuments(in DiffInput) ([3][]byte, error) {
	var docs [3][]byte
	for i, data := range [3][]byte{in.Original, in.Modified, in.Current} {
		j, err := toJSON(data)
		if err != nil {
			return docs, fmt.Errorf("%s: %w", docNames[i], err)
		}
		docs[i] = j
	}
	return docs, nil
}

func yamlDiff(in DiffInput, opts Options, out Format) ([]byte, error) {
	var nodes [3]*yaml.Node
	for i, data := range [3][]byte{in.Original, in.Modified, in.Current} {
		docs, err := readYAMLDocuments(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", docNames[i], err)
		}
		switch {
		case len(docs) > 1:
			return nil, fmt.Errorf("%s: holds %d documents; diff compares one document with one", docNames[i], len(docs))
		case len(docs) == 0:
			docs = []*yaml.Node{{Kind: yaml.DocumentNode}}
		}
		if DetectFormat(data) == JSON {
			blockStyle(docs[0], true)
		}
		nodes[i] = docs[0]
	}
	t := schemaOfYAML(nodes[1], opts.Schema)
	if t == nil {
		t = schemaOfYAML(nodes[0], opts.Schema)
	}
	patch, err := strategicpatch.CreateThreeWayYAML(nodes[0], nodes[1], nodes[2], t, in.Overwrite || !in.HasCurrent)
	if err != nil {
		return nil, err
	}
	if out == JSON {
		j, err := nodeToJSON(patch)
		if err != nil {
			return nil, err
		}
		return render(j, JSON)
	}
	if len(patch.Content) == 1 && len(patch.Content[0].Content) == 0 {
		return []byte("{}\n"), nil
	}
	return encodeYAML(patch)
}

// mergeDiff creates a JSON merge patch (RFC 7386): modified's changes against
// current, and null for the fields original had and modified dropped. Fields
// only current has are left alone.
func mergeDiff(in DiffInput, out Format) ([]byte, error) {
	docs, err := jsonDocuments(in)
	if err != nil {
		return nil, err
	}
	changes, err := jsonpatch.CreateMergePatch(docs[2], docs[1])
	if err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	if !in.HasCurrent {
		return render(changes, out)
	}
	deletions, err := jsonpatch.CreateMergePatch(docs[0], docs[1])
	if err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	var c, d map[string]any
	if err := errors.Join(json.Unmarshal(changes, &c), json.Unmarshal(deletions, &d)); err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	dropNulls(c)
	addNulls(c, d)
	merged, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("merge patch: %w", err)
	}
	return render(merged, out)
}

// dropNulls removes the deletions of fields only current has.
func dropNulls(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(v)
			if len(v) == 0 {
				delete(m, k)
			}
		}
	}
}

// addNulls copies into dst the deletions (nulls) of src.
func addNulls(dst, src map[string]any) {
	for k, v := range src {
		switch v := v.(type) {
		case nil:
			dst[k] = nil
		case map[string]any:
			sub, ok := dst[k].(map[string]any)
			if !ok {
				if _, set := dst[k]; set {
					continue
				}
				sub = map[string]any{}
			}
			addNulls(sub, v)
			if len(sub) > 0 {
				dst[k] = sub
			}
		}
	}
}
