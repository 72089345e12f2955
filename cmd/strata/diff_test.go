package main

import "testing"

var diffCases = []cliCase{
	{
		name:     "two-way: changes, deletions and $setElementOrder",
		args:     []string{"diff", "{repo}/cmd/strata/testdata/diff/last.yaml", "{repo}/cmd/strata/testdata/diff/new.yaml"},
		wantCode: exitOK, golden: "diff-two-way.yaml",
	},
	{
		name: "three-way: fields only the live object has are left alone",
		args: []string{"diff", "{repo}/cmd/strata/testdata/diff/last.yaml", "{repo}/cmd/strata/testdata/diff/new.yaml",
			"--current", "{repo}/cmd/strata/testdata/diff/live.yaml", "-o", "json"},
		wantCode: exitOK, golden: "diff-three-way.json",
	},
	{
		name: "three-way without overwrite: a conflict lists its paths",
		args: []string{"diff", "{repo}/cmd/strata/testdata/diff/last.yaml", "{repo}/cmd/strata/testdata/diff/new.yaml",
			"--current", "{repo}/cmd/strata/testdata/diff/live.yaml", "--overwrite=false"},
		wantCode:   exitRejected,
		wantStderr: "error: {repo}/cmd/strata/testdata/diff/new.yaml: the patch conflicts with changes made to the current document at 1 path(s): spec.template.spec.containers[name=web].image\n",
	},
	{
		name:       "no difference prints {}",
		files:      map[string]string{"a.json": `{"a":[1,2]}`, "b.json": `{"a": [1, 2]}`},
		args:       []string{"diff", "a.json", "b.json"},
		wantCode:   exitOK,
		wantStdout: "{}\n",
	},
	{
		name:       "merge patch: lists whole, null for deletions",
		files:      map[string]string{"a.json": `{"a":[1,2],"b":1}`, "b.json": `{"a":[2]}`},
		args:       []string{"diff", "a.json", "b.json", "--type", "merge"},
		wantCode:   exitOK,
		wantStdout: "{\n  \"a\": [\n    2\n  ],\n  \"b\": null\n}\n",
	},
	{
		name: "three-way merge patch leaves fields only current has",
		files: map[string]string{"o.json": `{"a":1,"b":1}`, "m.json": `{"a":2}`,
			"c.json": `{"a":1,"b":1,"c":{"x":1}}`},
		args:       []string{"diff", "o.json", "m.json", "--current", "c.json", "--type", "merge"},
		wantCode:   exitOK,
		wantStdout: "{\n  \"a\": 2,\n  \"b\": null\n}\n",
	},
	{
		name:       "a field changing type is replaced",
		files:      map[string]string{"a.yaml": "spec: {ports: [1], sel: {a: b}, n: 1}\n", "b.yaml": "spec: {ports: {a: 1}, sel: none, n: [1]}\n"},
		args:       []string{"diff", "a.yaml", "b.yaml"},
		wantCode:   exitOK,
		wantStdout: "spec:\n  ports: {a: 1}\n  sel: none\n  n: [1]\n",
	},
	{
		name: "a merge list changing type is rejected by its schema",
		files: map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a}]}\n",
			"b.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: none}\n"},
		args:       []string{"diff", "a.yaml", "b.yaml"},
		wantCode:   exitRejected,
		wantStderr: "error: b.yaml: spec.containers: wrong type: the schema makes this a merge list, but the modified document has string \"none\" (the original a list)\n",
	},
	{
		name: "a list element without its merge key",
		files: map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a}]}\n",
			"b.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: [{image: b}]}\n"},
		args:       []string{"diff", "a.yaml", "b.yaml"},
		wantCode:   exitRejected,
		wantStderr: "error: b.yaml: spec.containers: missing merge key: item 0 of the modified list lacks merge key name\n",
	},
	{
		name: "duplicate merge keys in the modified list",
		files: map[string]string{"a.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a}]}\n",
			"b.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a}, {name: a, image: x}]}\n"},
		args:       []string{"diff", "a.yaml", "b.yaml"},
		wantCode:   exitRejected,
		wantStderr: "error: b.yaml: spec.containers: duplicate merge key: items 0 and 1 of the modified list are both name=a\n",
	},
	{
		name:       "unparseable input",
		files:      map[string]string{"a.json": `{"a":`, "b.json": `{}`},
		args:       []string{"diff", "a.json", "b.json"},
		wantCode:   exitRejected,
		wantStderr: "error: b.json: (root): malformed document: original document: invalid JSON at byte 5: unexpected end of input\n",
	},
	{name: "one argument", args: []string{"diff", "a.yaml"}, wantCode: exitUsage, wantStderr: "error: accepts 2 arg(s), received 1\n"},
	{name: "bad type", args: []string{"diff", "a", "b", "--type", "json"}, wantCode: exitUsage, wantStderr: "error: --type \"json\": want strategic or merge\n"},
	{name: "overwrite without current", args: []string{"diff", "a", "b", "--overwrite=false"}, wantCode: exitUsage, wantStderr: "error: --overwrite needs --current\n"},
}

func TestDiffCommand(t *testing.T) { runCLICases(t, diffCases) }
