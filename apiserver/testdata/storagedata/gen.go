//go:build ignore

// gen extracts the example objects of k8s.io/kubernetes's
// test/integration/etcd/data.go (GetEtcdStorageDataForNamespace: one valid
// object per resource and version) into stubs.json, for the resources
// strata serves. That package cannot be imported without building
// kube-apiserver, so its stubs are copied:
//
//	go run ./apiserver/testdata/storagedata/gen.go -- \
//	    $(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2/test/integration/etcd/data.go \
//	    > apiserver/testdata/storagedata/stubs.json
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
)

// stub is one example object.
type stub struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	Stub     string `json:"stub"`
	// Mutated is the upstream MutatedStub: a merge patch the test applies.
	Mutated string `json:"mutated,omitempty"`
}

func main() {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, os.Args[len(os.Args)-1], nil, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out []stub
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		call, ok := kv.Key.(*ast.CallExpr)
		if !ok || fmt.Sprint(call.Fun) != "gvr" || len(call.Args) != 3 {
			return true
		}
		s := stub{Group: lit(call.Args[0]), Version: lit(call.Args[1]), Resource: lit(call.Args[2])}
		if strings.Contains(s.Version, "alpha") || strings.Contains(s.Version, "beta") {
			return false
		}
		body, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return false
		}
		for _, e := range body.Elts {
			field := e.(*ast.KeyValueExpr)
			switch fmt.Sprint(field.Key) {
			case "Stub":
				s.Stub = lit(field.Value)
			case "MutatedStub":
				s.Mutated = lit(field.Value)
			}
		}
		if s.Stub != "" && !strings.Contains(s.Group, ".com") {
			out = append(out, s)
		}
		return false
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Resource+out[i].Version < out[j].Resource+out[j].Version
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// lit is the value of a string literal (or of a concatenation of them).
func lit(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(v.Value)
		if err != nil {
			panic(err)
		}
		return s
	case *ast.BinaryExpr:
		return lit(v.X) + lit(v.Y)
	case *ast.Ident:
		// The test's namespace, which the test substitutes.
		return "$" + v.Name
	}
	panic(fmt.Sprintf("not a string literal: %T", e))
}
