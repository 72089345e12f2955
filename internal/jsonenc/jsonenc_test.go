package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote\" backslash\\ <html> & \u2028\u2029 \x00\x01\x1f \b\f\n\r\t é 世界",
		"bad utf8 \xff\xfe end", int64(0), int64(-42), int64(math.MaxInt64), 7, int32(-3),
		0.0, 1.5, -2.25, 1e-7, 1e21, 123456789.125, 1e-6, 5e-324, math.MaxFloat64,
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": int64(1), "a": []any{"x", 2.5, nil, map[string]any{"z": true, "y": "<>"}}, "": "empty key", "é": "k"},
		[]map[string]any{{"k": "v"}, {}},
		json.Number("12.50"),
		keyed(smallMapKeys), keyed(smallMapKeys + 1), keyed(3 * smallMapKeys),
		struct {
			A int `json:"a"`
		}{3},
	}
	for _, v := range values {
		want, wantErr := json.Marshal(v)
		got, err := Marshal(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("Marshal(%#v):\n got %s (%v)\nwant %s (%v)", v, got, err, want, wantErr)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Marshal(f); err == nil {
			t.Errorf("Marshal(%v): no error", f)
		}
	}
}

// keyed is a map of n keys inserted out of order and, for n > 1, a
// "nested" key holding keyed(n-1): maps of every size from 1 to n+1 keys,
// at, just past and well past what appendMap sorts on the stack.
func keyed(n int) map[string]any {
	m := map[string]any{}
	for i := n - 1; i >= 0; i-- {
		m[string(rune('z'-i%26))+strconv.Itoa(i)] = int64(i)
	}
	if n > 1 {
		m["nested"] = keyed(n - 1)
	}
	return m
}

// FuzzMarshal decodes arbitrary JSON as apimachinery's unstructured code
// does (int64 for integers) and checks the encoding against
// encoding/json's, byte for byte.
func FuzzMarshal(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":[true,null,"x"],"c":{"d":1.5e-9}}`, `"\u2028<&>"`, `[1e300,-0.0,12345678901234567890]`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v\n"}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if err := utiljson.Unmarshal(data, &v); err != nil {
			return
		}
		want, wantErr := json.Marshal(v)
		got, err := Marshal(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("Marshal of %q:\n got %s (%v)\nwant %s (%v)", data, got, err, want, wantErr)
		}
	})
}

func BenchmarkConfigMapList(b *testing.B) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm-" + string(rune('a'+i%26)), "namespace": "bench", "uid": "0b0c6f7e-8f7c-4a8e-9c3e-1d2e3f4a5b6c",
				"resourceVersion": "123456", "creationTimestamp": "2026-11-23T17:00:00Z", "labels": map[string]any{"app": "bench"}},
			"data": map[string]any{"key": "value", "other": "some longer value with <html> & stuff"}}
	}
	list := map[string]any{"items": items}
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(list); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonenc", func(b *testing.B) {
		for b.Loop() {
			if _, err := Marshal(list); err != nil {
				b.Fatal(err)
			}
		}
	})
}
