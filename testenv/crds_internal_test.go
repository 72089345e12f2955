package testenv

import (
	"slices"
	"testing"
)

func TestReadCRDs(t *testing.T) {
	tests := []struct {
		path    string
		names   []string
		wantErr string
	}{
		{path: "testdata/crds", names: []string{"widgets.example.com"}},
		{path: "testdata/crds/widgets.yaml", names: []string{"widgets.example.com"}},
		{path: "testdata/badcrd", wantErr: `CRD file testdata/badcrd/bad.yaml: document 1: error unmarshaling JSON: while decoding JSON: json: unknown field "scoop"`},
		{path: "testdata/missing", wantErr: "CRD path: stat testdata/missing: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			crds, err := readCRDs(tt.path)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("readCRDs: %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range crds {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("CRDs read: %q, want %q", names, tt.names)
			}
		})
	}
}
