package bench

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
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
	return func(ctx context.Context) error { return r.createByApply(ctx, t.cs) }
}

// createByApply creates one Deployment per client of the largest cell
// through cs, by apply.
func (r *runner) createByApply(ctx context.Context, cs kubernetes.Interface) error {
	return cell.Parallel(ctx, slices.Max(r.cfg.Concurrency), 16, func(ctx context.Context, w int) error {
		return applyVia(ctx, cs, applyName(w), "bench-a", applyConfig(w, 0))
	})
}

// applyAs applies with managers managers, alternating by request.
func (r *runner) applyAs(t *target, managers int) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		n := r.counter.Add(1)
		if managers == 2 && c.I%2 == 1 {
			body := fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"annotations":{"bench/b":"%d"}}}`,
				applyName(c.Worker), n)
			return applyVia(ctx, t.cs, applyName(c.Worker), "bench-b", body)
		}
		return applyVia(ctx, t.cs, applyName(c.Worker), "bench-a", applyConfig(c.Worker, n))
	}
}

func applyVia(ctx context.Context, cs kubernetes.Interface, name, manager string, body []byte) error {
	_, err := cs.AppsV1().Deployments(layout.Namespace).Patch(ctx, name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: manager})
	return err
}
