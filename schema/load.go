package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads a schema document: an OpenAPI v2 document (swagger: "2.0"), an
// OpenAPI v3 document (openapi: 3.x), or CustomResourceDefinition manifests
// (several may share a YAML stream, or sit in a List), in YAML or JSON. name
// is the file name used in errors. Every schema is checked: malformed
// extensions, dangling references and reference cycles are reported as
// *Error values naming the file, the path inside it and the rule.
func Load(name string, data []byte) (*Document, error) {
	docs, err := decodeAll(data)
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	if len(docs) == 0 {
		return nil, &Error{File: name, Err: errors.New("no document")}
	}
	root, _ := docs[0].(map[string]any)
	switch {
	case root == nil:
		return nil, &Error{File: name, Err: fmt.Errorf("want an object, not %s", describe(docs[0]))}
	case root["swagger"] != nil:
		return loadSingle(name, docs, loadOpenAPIV2)
	case root["openapi"] != nil:
		return loadSingle(name, docs, loadOpenAPIV3)
	case root["kind"] == "CustomResourceDefinition", root["kind"] == "List":
		return loadCRDs(name, docs)
	}
	return nil, &Error{File: name, Err: errors.New(
		`not an OpenAPI v2 or v3 document nor a CustomResourceDefinition (no "swagger", "openapi" or "kind: CustomResourceDefinition")`)}
}

// LoadFile reads and loads the schema document in file; see Load.
func LoadFile(file string) (*Document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return Load(file, data)
}

// LoadFiles loads each file, for a repeated --schema flag.
func LoadFiles(files ...string) (Set, error) {
	set := make(Set, 0, len(files))
	for _, f := range files {
		d, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		set = append(set, d)
	}
	return set, nil
}

func loadSingle(name string, docs []any, load func(string, map[string]any) (*Document, error)) (*Document, error) {
	if len(docs) > 1 {
		return nil, &Error{File: name, Err: errors.New("an OpenAPI document must be the only document in its file")}
	}
	return load(name, docs[0].(map[string]any))
}

// decodeAll decodes every document of a YAML stream, or one JSON value, into
// maps, lists and scalars. Empty YAML documents are skipped.
func decodeAll(data []byte) (docs []any, err error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return []any{v}, nil
	}
	defer func() {
		if r := recover(); r != nil { // the YAML parser must not take strata down
			docs, err = nil, fmt.Errorf("invalid YAML: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		if v != nil {
			docs = append(docs, normalize(v))
		}
	}
}

// normalize turns YAML's decoded values into JSON's: maps with non-string
// keys get string keys, other scalars (timestamps) become strings.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalize(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
		return v
	case string, bool, nil, int, int64, uint64, float64:
		return v
	}
	return fmt.Sprint(v)
}

// versionString reads the "swagger" or "openapi" field, which YAML may have
// decoded as a number.
func versionString(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case int, float64:
		return fmt.Sprint(v)
	}
	return ""
}
