package jsondec

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// upstream is what apimachinery's decoder makes of data as a stored
// object is decoded: the map, or an error (a JSON null is no object).
func upstream(data []byte) (map[string]any, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

func mustUpstream(t *testing.T, data []byte) map[string]any {
	t.Helper()
	m, err := upstream(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// check holds Object to upstream on data: whatever Object accepts,
// upstream accepts with the same value, types included.
func check(t *testing.T, data []byte) (ok bool) {
	t.Helper()
	got, ok := Object(data)
	if !ok {
		return false
	}
	want, err := upstream(data)
	if err != nil {
		t.Fatalf("%q: Object accepted what apimachinery refuses (%v): %#v", data, err, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n Object   %#v\n upstream %#v", data, got, want)
	}
	return true
}

// TestObjectMatchesUpstream: values of every kind, escapes, numbers at the
// edges of int64 and float64, repeated keys and white space decode as
// apimachinery decodes them; what Object leaves to apimachinery is only
// what apimachinery refuses or what this package does not take on.
func TestObjectMatchesUpstream(t *testing.T) {
	accepted := []string{
		`{}`, ` {"a":1} `, "\t{\n\"a\" : [ ] , \"b\":{ }\r}\n",
		`{"s":"plain","e":"","u":"é 世界","esc":"q\" b\\ s\/ \b\f\n\r\t \u00e9 \u2028 \ud83d\ude00","lone":"\ud800 x \udc00"}`,
		`{"bad":"` + "\xff\xfe" + `","k` + "\xc3\xa9" + `":1}`,
		`{"i":0,"n":-0,"big":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808,"under":-9223372036854775809}`,
		`{"f":1.5,"z":0.0,"nz":-0.0,"e":1e2,"E":1E+2,"m":-2.5e-3,"tiny":5e-324,"max":1.7976931348623157e308,"int-exp":10e0}`,
		`{"t":true,"f":false,"n":null,"a":[1,"x",null,[],{},[[]],{"b":[true]}]}`,
		`{"dup":1,"dup":"second","o":{"x":1,"x":{"y":2}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","labels":{"app":"x"},"managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}}}]},"data":{"k":"v"}}`,
	}
	// Strings longer than a word, with what ends or escapes them at each
	// place of the words after the first.
	long := strings.Repeat("x", 19)
	for i := 1; i < len(long); i++ {
		accepted = append(accepted, `{"s":"`+long[:i]+`\n`+long[i:]+`","u":"`+long[:i]+"é"+long[i:]+`","e":"`+long[:i]+`"}`)
	}
	for _, obj := range testdataObjects(t) {
		accepted = append(accepted, string(obj.data))
	}
	for _, s := range accepted {
		if !check(t, []byte(s)) {
			t.Errorf("%q: left to apimachinery, want decoded here", s)
		}
	}
	left := []string{
		``, `null`, `[]`, `"s"`, `1`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1}x`, `{"a":1}{}`, `{'a':1}`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":+1}`, `{"a":1e400}`, `{"a":-1e400}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":"x` + "\n" + `"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"unterminated}`,
		"\xef\xbb\xbf{}", `{"a":[1 2]}`, `{"a" 1}`, `{1:2}`,
		`{"a":"` + long + "\t" + long + `"}`, `{"a":"` + long + "\x7f\x00" + `"}`, `{"a":"` + long,
		strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat(`}`, maxDepth+1),
	}
	for _, s := range left {
		if check(t, []byte(s)) {
			t.Errorf("%q: decoded here, want it left to apimachinery", s)
		}
	}
	if got, _ := Object([]byte(`{"a":9223372036854775808}`)); got["a"] != float64(math.MaxInt64)+1 {
		t.Errorf("an integer past int64: %#v, want float64", got["a"])
	}
}

// TestObjectSharesKeys: common keys are one string across objects.
func TestObjectSharesKeys(t *testing.T) {
	a, _ := Object([]byte(`{"metadata":{}}`))
	b, _ := Object([]byte(`{"metadata":{}}`))
	var ka, kb string
	for k := range a {
		ka = k
	}
	for k := range b {
		kb = k
	}
	if ka != "metadata" || unsafe.StringData(ka) != unsafe.StringData(kb) {
		t.Fatalf("keys %q and %q are separate copies", ka, kb)
	}
}

// FuzzObject: on any input, what Object decodes, apimachinery decodes to
// the same value, and ObjectReusing decodes what Object does, to the same
// value, whether it decodes or reuses metadata.managedFields. Seeds:
// testdata/*.json and TestObjectMatchesUpstream's.
func FuzzObject(f *testing.F) {
	for _, obj := range testdataObjects(f) {
		f.Add(obj.data)
	}
	for _, s := range []string{`{"a":[1,2.5,"x",null,true,{"b":-0}]}`, `{"s":"\ud83d\ude00\u00e9` + "\xff" + `"}`, `{"n":1e2,"m":9223372036854775808}`} {
		f.Add([]byte(s))
	}
	reuse := NewReuse("metadata", "managedFields", 1<<20)
	f.Fuzz(func(t *testing.T, data []byte) {
		decoded := check(t, data)
		// Twice: decoded, then reused.
		for range 2 {
			got, ok := ObjectReusing(data, reuse)
			if ok != decoded || ok && !reflect.DeepEqual(got, mustUpstream(t, data)) {
				t.Fatalf("%q: ObjectReusing %#v, %v; Object: %v", data, got, ok, decoded)
			}
		}
	})
}

// testdataObject is one object of testdata/*.json.
type testdataObject struct {
	name string // the file's name without .json
	data []byte
}

// testdataObjects reads testdata/*.json, and fails when there is none.
func testdataObjects(tb testing.TB) []testdataObject {
	tb.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("testdata: %v %v", files, err)
	}
	out := make([]testdataObject, 0, len(files))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, testdataObject{strings.TrimSuffix(filepath.Base(name), ".json"), data})
	}
	return out
}

// TestPlain: a word is plain exactly when none of its bytes is a quote, a
// backslash, a control character or 0x80 and above, whatever the byte's
// place and whatever the other bytes (checked against each byte alone,
// with one or two bytes of every value set in a plain word).
func TestPlain(t *testing.T) {
	special := func(b byte) bool { return b == '"' || b == '\\' || b < 0x20 || b >= 0x80 }
	word := func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
	for v := range 256 {
		for p := range 8 {
			b := []byte("abcdefgh")
			b[p] = byte(v)
			if got, want := plain(word(b)), !special(byte(v)); got != want {
				t.Fatalf("plain(%q) = %v, want %v", b, got, want)
			}
			for w := range 256 {
				for q := p + 1; q < 8; q++ {
					b2 := slices.Clone(b)
					b2[q] = byte(w)
					if got, want := plain(word(b2)), !special(byte(v)) && !special(byte(w)); got != want {
						t.Fatalf("plain(%q) = %v, want %v", b2, got, want)
					}
				}
			}
		}
	}
}
