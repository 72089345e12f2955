package jsondec

import (
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// BenchmarkDecode decodes each testdata object with Object and with
// apimachinery's json.Unmarshal (what the watch cache used before).
func BenchmarkDecode(b *testing.B) {
	for _, obj := range testdataObjects(b) {
		data := obj.data
		b.Run(obj.name+"/jsondec", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for range b.N {
				if _, ok := Object(data); !ok {
					b.Fatal("not decoded")
				}
			}
		})
		b.Run(obj.name+"/apimachinery", func(b *testing.B) {
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
