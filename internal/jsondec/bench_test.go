package jsondec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// BenchmarkDecode decodes each testdata object with Object and with
// apimachinery's json.Unmarshal (what the watch cache used before).
func BenchmarkDecode(b *testing.B) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(name), ".json")
		b.Run(base+"/jsondec", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for range b.N {
				if _, ok := Object(data); !ok {
					b.Fatal("not decoded")
				}
			}
		})
		b.Run(base+"/apimachinery", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for range b.N {
				var m map[string]any
				if err := utiljson.Unmarshal(data, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
