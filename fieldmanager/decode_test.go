package fieldmanager

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// decodeSeeds are configurations as clients send them, and JSON the YAML
// reader may read differently.
var decodeSeeds = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{"n":"1"}},"spec":{"replicas":3}}`,
	` {"a":[1,2.5,-0,1e3,12345678901234567890,9007199254740993],"b":{"c":null,"d":true,"e":""}}`,
	`{"s":"\u00e9\n\t\"\\\/","k":"yes","on":"no","<<":{"x":1}}`,
	`{"a":1,"a":2}`,
	`{"a":1}{"b":2}`,
	"{\"a\":\t1}",
	`{"a":01}`,
	`{"a":1e400}`,
	`{}`,
	"{\n  \"metadata\": {\n    \"name\": \"x\"\n  },\r\n\"a\" : [ 1 ,\n2 ]\n}\n",
	`{"emoji":"\ud83d\ude00","nel":"\u0085"}`,
	"{\"raw\":\"\u0085\u2028\u00e9\"}",
	`null`,
	"apiVersion: v1\nkind: ConfigMap\n",
}

// TestDecodeJSONConfig: the JSON reading of a configuration is the YAML
// reader's, and duplicates are left to the YAML path.
func TestDecodeJSONConfig(t *testing.T) {
	for _, tc := range []struct {
		config string
		ok     bool
	}{
		{decodeSeeds[0], true},
		{decodeSeeds[1], true},
		{`{"a":1,"a":2}`, false},
		{`{"a":1}{"b":2}`, false},
		{"apiVersion: v1\n", false},
		{`null`, false},
		{decodeSeeds[9], true}, // indented, CRLF
		{`{"s":"a\/b"}`, false},
		{`{"s":"\ud83d\ude00"}`, false},
		{"{\"s\":\"\u0085\"}", false},
		{"{\"a\":\t1}", false},
		{`{"s":"\u0085 \n\"\\"}`, true},
	} {
		got, ok := decodeJSONConfig([]byte(tc.config))
		if ok != tc.ok {
			t.Errorf("decodeJSONConfig(%s): read %v, want %v", tc.config, ok, tc.ok)
			continue
		}
		if ok {
			checkAsYAML(t, []byte(tc.config), got.Object)
		}
	}
}

// checkAsYAML fails unless the YAML reader, strict, reads config as obj.
func checkAsYAML(t *testing.T, config []byte, obj map[string]any) {
	t.Helper()
	want := map[string]any{}
	if err := yaml.UnmarshalStrict(config, &want); err != nil {
		t.Fatalf("JSON read %s, YAML refused it: %v", config, err)
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("%s:\nJSON read %#v\nYAML read %#v", config, obj, want)
	}
}

// FuzzDecodeJSONConfig: whatever the JSON reading accepts, the YAML
// reader (kube-apiserver's) reads the same.
func FuzzDecodeJSONConfig(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, config []byte) {
		if got, ok := decodeJSONConfig(config); ok {
			checkAsYAML(t, config, got.Object)
		}
	})
}
