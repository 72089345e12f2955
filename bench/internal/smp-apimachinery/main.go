// Command smp-apimachinery is the minimal Go program that applies a strategic
// merge patch with apimachinery: it reads a Pod (JSON) and a patch (JSON),
// calls k8s.io/apimachinery's strategicpatch.StrategicMergePatch with the Pod
// type, and prints the result. "strata-bench commands" builds and
// runs it, whole process, against "strata patch" on the same files
// (bench/README.md). It is a program of its own, not a subcommand, so that
// its start-up and memory are apimachinery's alone.
//
//	smp-apimachinery POD.json PATCH.json
package main

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: smp-apimachinery POD.json PATCH.json")
		os.Exit(2)
	}
	doc, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	patch, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := strategicpatch.StrategicMergePatch(doc, patch, corev1.Pod{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[2], err)
		os.Exit(1)
	}
	os.Stdout.Write(append(out, '\n'))
}
