package strategicpatch_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8ssp "k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// Creation benchmarks: strata's CreateTwoWay and CreateThreeWay against
// apimachinery's CreateTwoWayMergePatch and CreateThreeWayMergePatch, on the
// apply benchmarks' inputs (bench_test.go);
// bench/results/2026-11-23-patch-creation.md has the commands and the
// results.

// createBenchCase is an original (the last applied configuration), the
// modified configuration and the live object.
type createBenchCase struct {
	orig, mod, cur []byte
	goType         any
	schema         schema.Type
}

// createBenchDeployment is testdata/bench/deployment.json, modified as the
// apply benchmark's patch does (one image, one added environment variable,
// five replicas); current carries what the cluster adds (a revision
// annotation, the status).
func createBenchDeployment(tb testing.TB) createBenchCase {
	d := benchDeployment(tb)
	mod, err := strategicpatch.ApplyJSON(d.doc, d.patch, d.schema, strategicpatch.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	live := `{"metadata":{"annotations":{"deployment.kubernetes.io/revision":"7"},"generation":7,"resourceVersion":"812734"},` +
		`"status":{"observedGeneration":7,"replicas":3,"readyReplicas":3,"updatedReplicas":3,"availableReplicas":3}}`
	cur, err := strategicpatch.ApplyJSON(d.doc, []byte(live), d.schema, strategicpatch.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return createBenchCase{d.doc, mod, cur, appsv1.Deployment{}, d.schema}
}

// createBenchEnvList is a container whose env list has n entries; modified
// changes the value of every 20th entry, adds an entry after every 20th
// (offset by 10) and drops every 50th (offset by 25): 10% changed, 5% added,
// 2% removed. Current has two fields the cluster defaults.
func createBenchEnvList(n int) createBenchCase {
	var orig, mod bytes.Buffer
	orig.WriteString(`{"name":"app","image":"registry.example.com/app:1.0","env":[`)
	mod.WriteString(`{"name":"app","image":"registry.example.com/app:1.0","env":[`)
	sepO, sepM := "", ""
	for i := range n {
		fmt.Fprintf(&orig, `%s{"name":"VAR_%06d","value":"value-%d"}`, sepO, i, i)
		sepO = ","
		switch {
		case i%50 == 25:
			continue
		case i%20 == 0:
			fmt.Fprintf(&mod, `%s{"name":"VAR_%06d","value":"changed-%d"}`, sepM, i, i)
		default:
			fmt.Fprintf(&mod, `%s{"name":"VAR_%06d","value":"value-%d"}`, sepM, i, i)
		}
		sepM = ","
		if i%20 == 10 {
			fmt.Fprintf(&mod, `,{"name":"NEW_%06d","value":"added-%d"}`, i, i)
		}
	}
	orig.WriteString(`]}`)
	mod.WriteString(`]}`)
	cur := append(bytes.TrimSuffix(bytes.Clone(orig.Bytes()), []byte("}")),
		`,"imagePullPolicy":"IfNotPresent","terminationMessagePath":"/dev/termination-log"}`...)
	return createBenchCase{orig.Bytes(), mod.Bytes(), cur, corev1.Container{}, schema.ForGoType(reflect.TypeOf(corev1.Container{}))}
}

func BenchmarkCreateDeployment(b *testing.B) {
	runCreateBench(b, createBenchDeployment(b), true)
}

func BenchmarkCreateEnvList(b *testing.B) {
	for _, n := range benchEnvSizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			runCreateBench(b, createBenchEnvList(n), n <= apimachineryEnvLimit)
		})
	}
}

func runCreateBench(b *testing.B, c createBenchCase, withAPIMachinery bool) {
	size := int64(len(c.mod))
	run := func(name string, fn func() ([]byte, error)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			for b.Loop() {
				if _, err := fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("two-way/strata", func() ([]byte, error) { return strategicpatch.CreateTwoWay(c.orig, c.mod, c.schema) })
	if withAPIMachinery {
		run("two-way/apimachinery", func() ([]byte, error) { return k8ssp.CreateTwoWayMergePatch(c.orig, c.mod, c.goType) })
	}
	run("three-way/strata", func() ([]byte, error) {
		return strategicpatch.CreateThreeWay(c.orig, c.mod, c.cur, c.schema, true)
	})
	if withAPIMachinery {
		meta, err := k8ssp.NewPatchMetaFromStruct(c.goType)
		if err != nil {
			b.Fatal(err)
		}
		run("three-way/apimachinery", func() ([]byte, error) {
			return k8ssp.CreateThreeWayMergePatch(c.orig, c.mod, c.cur, meta, true)
		})
	}
}

// TestCreateBenchInputs checks that on the benchmark inputs strata's
// patches give modified (two-way, on original) and modified plus what only
// current has (three-way, on current), as apimachinery's patches do.
func TestCreateBenchInputs(t *testing.T) {
	cases := map[string]createBenchCase{"deployment": createBenchDeployment(t)}
	for _, n := range []int{100, 1000} {
		cases[fmt.Sprintf("env-%d", n)] = createBenchEnvList(n)
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if bytes.Equal(c.orig, c.mod) {
				t.Fatal("modified is original")
			}
			sp, err := strategicpatch.CreateTwoWay(c.orig, c.mod, c.schema)
			if err != nil {
				t.Fatal(err)
			}
			kp, err := k8ssp.CreateTwoWayMergePatch(c.orig, c.mod, c.goType)
			if err != nil {
				t.Fatal(err)
			}
			checkCreated(t, "two-way", c.orig, c.mod, sp, kp, c)
			sp, err = strategicpatch.CreateThreeWay(c.orig, c.mod, c.cur, c.schema, true)
			if err != nil {
				t.Fatal(err)
			}
			meta, _ := k8ssp.NewPatchMetaFromStruct(c.goType)
			kp, err = k8ssp.CreateThreeWayMergePatch(c.orig, c.mod, c.cur, meta, true)
			if err != nil {
				t.Fatal(err)
			}
			want, err := k8ssp.StrategicMergePatch(c.cur, kp, c.goType)
			if err != nil {
				t.Fatal(err)
			}
			checkCreated(t, "three-way", c.cur, want, sp, kp, c)
		})
	}
}

// checkCreated applies both patches to doc with both engines and compares
// every result with want.
func checkCreated(t *testing.T, what string, doc, want, sp, kp []byte, c createBenchCase) {
	t.Helper()
	for _, p := range [][]byte{sp, kp} {
		got, err := k8ssp.StrategicMergePatch(doc, p, c.goType)
		if err != nil {
			t.Fatalf("%s: apimachinery applying %.300s: %v", what, p, err)
		}
		if !benchJSONEqual(t, got, want) {
			t.Errorf("%s: apimachinery applying %.300s gives %.300s", what, p, got)
		}
		for _, opts := range bothModes {
			got, err := strategicpatch.ApplyJSON(doc, p, c.schema, opts)
			if err != nil {
				t.Fatalf("%s: strata applying %.300s: %v", what, p, err)
			}
			if !benchJSONEqual(t, got, want) {
				t.Errorf("%s: strata (mode %d) applying %.300s gives %.300s", what, opts.Compat, p, got)
			}
		}
	}
}
