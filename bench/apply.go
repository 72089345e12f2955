package bench

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The server-side apply cells: each client applies its own Deployment,
// changing one field (an annotation) per request. With one manager,
// "bench-a" applies the whole configuration every time; with two, "bench-a"
// and "bench-b" alternate, b applying only an annotation of its own, so
// that every write merges into an object with two managers' entries.

func applyName(worker int) string { return fmt.Sprintf("apply-%03d", worker) }

// applyConfig is bench-a's configuration of a worker's Deployment.
func applyConfig(worker int, counter int64) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"annotations":{"bench/a":"%d"}},`+
		`"spec":{"replicas":1,"selector":{"matchLabels":{"app":"bench"}},"template":{"metadata":{"labels":{"app":"bench"}},`+
		`"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80}],"env":[{"name":"A","value":"1"}]}]}}}}`,
		applyName(worker), counter)
}

// prepareApply creates one Deployment per client of the largest cell, by
// apply.
func (r *runner) prepareApply(t *target) func(context.Context) error {
	return func(ctx context.Context) error {
		return parallel(ctx, slices.Max(r.cfg.Concurrency), 16, func(ctx context.Context, w int) error {
			return apply(ctx, t, applyName(w), "bench-a", applyConfig(w, 0))
		})
	}
}

// applyAs applies with managers managers, alternating by request.
func (r *runner) applyAs(t *target, managers int) func(context.Context, call) error {
	return func(ctx context.Context, c call) error {
		n := r.counter.Add(1)
		if managers == 2 && c.i%2 == 1 {
			body := fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"annotations":{"bench/b":"%d"}}}`,
				applyName(c.worker), n)
			return apply(ctx, t, applyName(c.worker), "bench-b", body)
		}
		return apply(ctx, t, applyName(c.worker), "bench-a", applyConfig(c.worker, n))
	}
}

func apply(ctx context.Context, t *target, name, manager string, body []byte) error {
	_, err := t.cs.AppsV1().Deployments(namespace).Patch(ctx, name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: manager})
	return err
}
