package strategicpatch_test

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// Containers merge by name: the patch adds a sidecar and keeps nginx.
func ExampleApplyJSON() {
	pod := []byte(`{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}`)
	patch := []byte(`{"spec":{"containers":[{"name":"log-tailer","image":"busybox"}]}}`)
	out, err := strategicpatch.ApplyJSON(pod, patch, schema.ForValue(corev1.Pod{}), strategicpatch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"},{"name":"log-tailer","image":"busybox"}]}}
}

// $setElementOrder puts the list in the order it gives; the live items it
// does not name come first.
func ExampleApplyJSON_setElementOrder() {
	pod := []byte(`{"metadata":{"finalizers":["b","e","a","c","d"]}}`)
	patch := []byte(`{"metadata":{
		"$setElementOrder/finalizers":["a","b","f"],
		"$deleteFromPrimitiveList/finalizers":["c"],
		"finalizers":["f"]}}`)
	out, _ := strategicpatch.ApplyJSON(pod, patch, schema.ForValue(corev1.Pod{}), strategicpatch.Options{})
	fmt.Println(string(out))
	// Output:
	// {"metadata":{"finalizers":["e","d","a","b","f"]}}
}

// A rejected patch names the path and the rule.
func ExampleError() {
	pod := []byte(`{"spec":{"containers":[{"name":"web"}]}}`)
	patch := []byte(`{"spec":{"containers":[{"image":"nginx"}]}}`)
	_, err := strategicpatch.ApplyJSON(pod, patch, schema.ForValue(corev1.Pod{}), strategicpatch.Options{})
	fmt.Println(err)
	// Output:
	// spec.containers: missing merge key: item 0 of the patch list lacks merge key name
}

// YAML documents keep their comments.
func ExampleApplyYAML() {
	var doc, patch yaml.Node
	_ = yaml.Unmarshal([]byte("spec:\n  replicas: 2 # scaled by hand\n"), &doc)
	_ = yaml.Unmarshal([]byte("spec:\n  replicas: 3\n"), &patch)
	out, err := strategicpatch.ApplyYAML(&doc, &patch, nil, strategicpatch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = yaml.NewEncoder(os.Stdout).Encode(out)
	// Output:
	// spec:
	//     replicas: 3 # scaled by hand
}
