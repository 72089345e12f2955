package pkgupdate

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// shape is the expected form of a Kptfile field: a scalar, a mapping with
// known fields (others are allowed and kept), a list, or a map of strings.
type shape struct {
	kind   yaml.Kind
	fields map[string]*shape // for mappings; nil means any keys with string values
	items  *shape            // for sequences
}

var (
	str       = &shape{kind: yaml.ScalarNode}
	strList   = &shape{kind: yaml.SequenceNode, items: str}
	strMap    = &shape{kind: yaml.MappingNode}
	selectors = &shape{kind: yaml.SequenceNode, items: &shape{kind: yaml.MappingNode, fields: map[string]*shape{
		"apiVersion": str, "kind": str, "name": str, "namespace": str, "labels": strMap, "annotations": strMap,
	}}}
	function = &shape{kind: yaml.MappingNode, fields: map[string]*shape{
		"image": str, "exec": str, "name": str, "configPath": str, "configMap": strMap,
		"selectors": selectors, "exclude": selectors,
	}}
	gitShape      = map[string]*shape{"repo": str, "directory": str, "ref": str}
	gitLockShape  = map[string]*shape{"repo": str, "directory": str, "ref": str, "commit": str}
	kptfileFields = map[string]*shape{
		"apiVersion": str,
		"kind":       str,
		"metadata":   {kind: yaml.MappingNode, fields: map[string]*shape{"name": str, "namespace": str, "labels": strMap, "annotations": strMap}},
		"upstream": {kind: yaml.MappingNode, fields: map[string]*shape{
			"type": str, "updateStrategy": str, "git": {kind: yaml.MappingNode, fields: gitShape},
		}},
		"upstreamLock": {kind: yaml.MappingNode, fields: map[string]*shape{
			"type": str, "git": {kind: yaml.MappingNode, fields: gitLockShape},
		}},
		"info": {kind: yaml.MappingNode, fields: map[string]*shape{
			"site": str, "emails": strList, "license": str, "licenseFile": str,
			"description": str, "keywords": strList, "man": str,
		}},
		"pipeline": {kind: yaml.MappingNode, fields: map[string]*shape{
			"mutators":   {kind: yaml.SequenceNode, items: function},
			"validators": {kind: yaml.SequenceNode, items: function},
		}},
		"inventory": {kind: yaml.MappingNode, fields: map[string]*shape{
			"namespace": str, "name": str, "inventoryID": str, "labels": strMap, "annotations": strMap,
		}},
	}
)

var kindNames = map[yaml.Kind]string{
	yaml.ScalarNode: "a scalar", yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list",
}

// check verifies the Kptfile's apiVersion and kind and the form of every
// field kpt knows; unknown fields are allowed.
func (k *Kptfile) check() error {
	root := deref(k.doc.Content[0])
	if root == nil || root.Kind != yaml.MappingNode {
		return &FieldError{File: k.File, Msg: "not a mapping; want a kpt.dev/v1 Kptfile"}
	}
	if err := checkShape(k.File, "", root, &shape{kind: yaml.MappingNode, fields: kptfileFields}); err != nil {
		return err
	}
	switch av := mapString(root, "apiVersion"); av {
	case KptfileAPIVersion:
	case "":
		return &FieldError{File: k.File, Path: "apiVersion", Msg: "missing; want kpt.dev/v1"}
	default:
		return &FieldError{File: k.File, Path: "apiVersion", Msg: fmt.Sprintf("%q is not supported; want kpt.dev/v1", av)}
	}
	if kind := mapString(root, "kind"); kind != KptfileKind {
		return &FieldError{File: k.File, Path: "kind", Msg: fmt.Sprintf("%q; want Kptfile", kind)}
	}
	if t := mapString(root, "upstream", "type"); t != "" && t != OriginGit {
		return &FieldError{File: k.File, Path: "upstream.type", Msg: fmt.Sprintf("%q is not supported; want git", t)}
	}
	if s := mapString(root, "upstream", "updateStrategy"); s != "" {
		if _, err := ParseStrategy(s); err != nil {
			return &FieldError{File: k.File, Path: "upstream.updateStrategy", Msg: err.Error()}
		}
	}
	return nil
}

func checkShape(file, path string, n *yaml.Node, want *shape) error {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != want.kind {
		return &FieldError{File: file, Path: path, Msg: fmt.Sprintf("is %s; want %s", kindNames[n.Kind], kindNames[want.kind])}
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if err := checkShape(file, fmt.Sprintf("%s[%d]", path, i), item, want.items); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		return checkMapping(file, path, n, want)
	}
	return nil
}

func checkMapping(file, path string, n *yaml.Node, want *shape) error {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		if seen[key] {
			return &FieldError{File: file, Path: sub, Msg: "appears twice"}
		}
		seen[key] = true
		fieldShape := str // a map of strings when fields is nil
		if want.fields != nil {
			if fieldShape = want.fields[key]; fieldShape == nil {
				continue // an unknown field: kept as it is
			}
		}
		if err := checkShape(file, sub, n.Content[i+1], fieldShape); err != nil {
			return err
		}
	}
	return nil
}
