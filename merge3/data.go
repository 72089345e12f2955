package merge3

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/schema"
)

// mergeData merges the three versions of a YAML file that holds no
// resources (a values.yaml, a kustomization.yaml without apiVersion) by
// document index, each document as a resource without a schema: maps merge
// by key, lists are taken whole, and a field both sides changed differently
// is a conflict settled by the policy. local's comments and formatting
// survive. ok is false — the file is then merged line by line — when a
// version does not parse, repeats a key, or the versions have different
// numbers of documents.
func (b *builder) mergeData(rel string, o, u, l []byte, style *pkgFile) ([]byte, bool) {
	var versions [3][]*yaml.Node
	for i, data := range [3][]byte{o, u, l} {
		docs, err := decodeDocs(data)
		if err != nil {
			return nil, false
		}
		for _, doc := range docs {
			if checkKeys(doc.Content[0], "") != nil {
				return nil, false
			}
		}
		versions[i] = docs
	}
	od, ud, ld := versions[0], versions[1], versions[2]
	if len(od) != len(ud) || len(ud) != len(ld) || len(ld) == 0 {
		return nil, false
	}
	report := *b.report
	report.Conflicts = append([]Conflict(nil), b.report.Conflicts...)
	merged := make([]*yaml.Node, len(ld))
	for i := range ld {
		m := &merger{opts: b.opts, report: &report, file: rel}
		if len(ld) > 1 {
			m.path = []string{fmt.Sprintf("(document %d)", i+1)}
		}
		doc := *ld[i]
		doc.Content = []*yaml.Node{m.value(od[i].Content[0], ud[i].Content[0], ld[i].Content[0], schema.Field{})}
		merged[i] = &doc
	}
	data, err := encodeDocs(merged, style)
	if err != nil {
		return nil, false
	}
	*b.report = report
	return data, true
}
