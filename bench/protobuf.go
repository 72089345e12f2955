package bench

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
)

// The protobuf cells: a typed client-go get and list (decoded into
// corev1 objects) of the listed ConfigMaps, once through a clientset
// configured for protobuf as controllers configure theirs and once through
// one configured for JSON, alternating in the same rounds. (client-go
// v0.37's typed clients ask for protobuf, with JSON as a fallback, when
// their config names no content type: the other cells' clientset does.)
// They compare strata with itself, so the pair's second side is strata's
// JSON cell and its ratio is protobuf ÷ JSON.

// clientsetFor is cfg's clientset with the given content type; a
// protobuf one accepts JSON too (for kinds without protobuf).
func clientsetFor(cfg *rest.Config, contentType string) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = contentType
	if contentType == runtime.ContentTypeProtobuf {
		c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("bench: client-go clientset for %s: %w", contentType, err)
	}
	return cs, nil
}

func (r *runner) typedGet(cs kubernetes.Interface) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		_, err := cs.CoreV1().ConfigMaps(layout.Namespace).Get(ctx, listName(c.I%r.cfg.Objects), metav1.GetOptions{})
		return err
	}
}

// protobufClient and jsonClient pick a target's clientset when a cell
// runs (the floor's are built when it starts).
func protobufClient(t *target) kubernetes.Interface { return t.protobuf }
func jsonClient(t *target) kubernetes.Interface     { return t.json }

// typedList lists the namespace from the watch cache (resourceVersion
// "0", as informers start) through t's clientset cs and decodes every
// item.
func (r *runner) typedList(t *target, cs func(*target) kubernetes.Interface) func(context.Context, cell.Call) error {
	return func(ctx context.Context, _ cell.Call) error {
		l, err := cs(t).CoreV1().ConfigMaps(layout.Namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil && len(l.Items) != t.listItems {
			err = fmt.Errorf("list has %d items, want %d", len(l.Items), t.listItems)
		}
		return err
	}
}
