package strategicpatch_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8ssp "k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// The benchmarks run strata (both modes), apimachinery and a plain
// encoding/json round trip of the document (the "codec floor") on the same
// inputs; bench/README.md has the commands and the results.

// benchCase is one document and patch, with the Go type apimachinery needs.
type benchCase struct {
	doc, patch []byte
	goType     any
	schema     schema.Type
}

// benchDeployment is testdata/bench/deployment.json (compacted, as an API
// server stores it) with the patch kubectl apply sends after a change of one
// image, one added environment variable and a new replica count.
func benchDeployment(tb testing.TB) benchCase {
	raw, err := os.ReadFile("testdata/bench/deployment.json")
	if err != nil {
		tb.Fatal(err)
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, raw); err != nil {
		tb.Fatal(err)
	}
	patch := `{"spec":{"replicas":5,"template":{"spec":{` +
		`"$setElementOrder/containers":[{"name":"api"},{"name":"envoy"}],` +
		`"containers":[{"name":"api","image":"registry.example.com/shop/checkout:2.15.0",` +
		`"$setElementOrder/env":[{"name":"LOG_LEVEL"},{"name":"DB_HOST"},{"name":"DB_PORT"},{"name":"DB_PASSWORD"},` +
		`{"name":"POD_NAME"},{"name":"POD_NAMESPACE"},{"name":"CACHE_TTL"},{"name":"FEATURE_FLAGS"},{"name":"TRACING_ENDPOINT"}],` +
		`"env":[{"name":"TRACING_ENDPOINT","value":"http://otel-collector.observability:4317"}]}]}}}}`
	return benchCase{doc.Bytes(), []byte(patch), appsv1.Deployment{}, schema.ForGoType(reflect.TypeOf(appsv1.Deployment{}))}
}

// benchEnvList is a container whose env list has n entries, and a patch
// touching n/10 of them: even-numbered touches change the value of every
// 20th entry, odd-numbered ones add an entry after every 20th entry (offset
// by 10). The patch carries the full $setElementOrder/env, as kubectl sends.
func benchEnvList(n int) benchCase {
	var doc, patch, order bytes.Buffer
	doc.WriteString(`{"name":"app","image":"registry.example.com/app:1.0","env":[`)
	order.WriteString(`"$setElementOrder/env":[`)
	patch.WriteString(`"env":[`)
	for i := range n {
		if i > 0 {
			doc.WriteByte(',')
			order.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"name":"VAR_%06d","value":"value-%d"}`, i, i)
		fmt.Fprintf(&order, `{"name":"VAR_%06d"}`, i)
		if i%10 != 0 {
			continue
		}
		k := i / 10 // the k-th touch
		if k > 0 {
			patch.WriteByte(',')
		}
		if k%2 == 0 {
			fmt.Fprintf(&patch, `{"name":"VAR_%06d","value":"changed-%d"}`, i, i)
		} else {
			fmt.Fprintf(&order, `,{"name":"NEW_%06d"}`, k)
			fmt.Fprintf(&patch, `{"name":"NEW_%06d","value":"added-%d"}`, k, k)
		}
	}
	doc.WriteString(`]}`)
	p := append([]byte(`{`+order.String()+`],`), patch.String()+`]}`...)
	return benchCase{doc.Bytes(), p, corev1.Container{}, schema.ForGoType(reflect.TypeOf(corev1.Container{}))}
}

var benchEnvSizes = []int{100, 1000, 10000, 100000}

// apimachineryEnvLimit is the largest env list apimachinery is run on: its
// list merge is quadratic, and 100,000 entries would take many minutes.
const apimachineryEnvLimit = 10000

func BenchmarkDeployment(b *testing.B) {
	runBenchCase(b, benchDeployment(b), true)
}

func BenchmarkEnvList(b *testing.B) {
	for _, n := range benchEnvSizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			runBenchCase(b, benchEnvList(n), n <= apimachineryEnvLimit)
		})
	}
}

func runBenchCase(b *testing.B, c benchCase, withAPIMachinery bool) {
	size := int64(len(c.doc))
	b.Run("strata", func(b *testing.B) {
		benchStrata(b, c, strategicpatch.Options{}, size)
	})
	b.Run("strata-k8s", func(b *testing.B) {
		benchStrata(b, c, strategicpatch.Options{Compat: strategicpatch.Kubernetes}, size)
	})
	if withAPIMachinery {
		b.Run("apimachinery", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			var out []byte
			for b.Loop() {
				var err error
				if out, err = k8ssp.StrategicMergePatch(c.doc, c.patch, c.goType); err != nil {
					b.Fatal(err)
				}
			}
			// The sizes TestBenchInputsAgree leaves out are checked here,
			// where apimachinery's result comes for free.
			checkBenchResult(b, c, out)
		})
	}
	b.Run("codec-floor", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(size)
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(c.doc, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchStrata(b *testing.B, c benchCase, opts strategicpatch.Options, size int64) {
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		if _, err := strategicpatch.ApplyJSON(c.doc, c.patch, c.schema, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchInputsAgree checks that on the benchmark inputs strata, in both
// modes, gives apimachinery's result (the same JSON value). The default mode
// agrees here because every patch carries a $setElementOrder listing every
// item, so both ordering rules give the directive's order.
func TestBenchInputsAgree(t *testing.T) {
	cases := map[string]benchCase{"deployment": benchDeployment(t)}
	// apimachinery takes tens of seconds at 10,000 entries; the benchmark
	// checks that size (and every size it runs apimachinery on) itself.
	for _, n := range []int{100, 1000} {
		cases[fmt.Sprintf("env-%d", n)] = benchEnvList(n)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := k8ssp.StrategicMergePatch(c.doc, c.patch, c.goType)
			if err != nil {
				t.Fatalf("apimachinery: %v", err)
			}
			if bytes.Equal(want, c.doc) {
				t.Fatal("the patch changes nothing")
			}
			checkBenchResult(t, c, want)
		})
	}
}

// checkBenchResult compares strata's results in both modes with want,
// apimachinery's, as JSON values (list order included).
func checkBenchResult(tb testing.TB, c benchCase, want []byte) {
	tb.Helper()
	for _, mode := range []struct {
		name string
		opts strategicpatch.Options
	}{{"default", strategicpatch.Options{}}, {"kubernetes", strategicpatch.Options{Compat: strategicpatch.Kubernetes}}} {
		got, err := strategicpatch.ApplyJSON(c.doc, c.patch, c.schema, mode.opts)
		if err != nil {
			tb.Fatalf("%s mode: %v", mode.name, err)
		}
		if !benchJSONEqual(tb, got, want) {
			tb.Errorf("%s mode differs from apimachinery:\n got %.600s\nwant %.600s", mode.name, got, want)
		}
	}
}

func benchJSONEqual(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		tb.Fatalf("invalid JSON %.200s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		tb.Fatalf("invalid JSON %.200s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}
