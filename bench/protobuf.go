package bench

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The protobuf cells: a typed client-go get and list (decoded into
// corev1 objects) of the listed ConfigMaps, once through a clientset
// configured for protobuf as controllers configure theirs and once through
// one configured for JSON, alternating in the same rounds. (client-go
// v0.37's typed clients ask for protobuf, with JSON as a fallback, when
// their config names no content type: the other cells' clientset does.)
// They compare strata with itself, so the pair's second side is strata's
// JSON cell and its ratio is protobuf ÷ JSON.

// Operation names of the protobuf cells.
const (
	opGetProtobuf  = "get-protobuf"
	opGetJSON      = "get-json"
	opListProtobuf = "list-protobuf"
	opListJSON     = "list-json"
)

// protobufPairs are t's protobuf cells, each beside its JSON cell.
func (r *runner) protobufPairs(t *target) []pair {
	s := func(name string, run func(context.Context, call) error) op {
		return op{side: t.side, name: name, pid: t.pid, run: run}
	}
	return []pair{
		{strata: s(opGetProtobuf, r.typedGet(t.protobuf)), etcd: s(opGetJSON, r.typedGet(t.json))},
		{strata: s(opListProtobuf, r.typedList(t, protobufClient)), etcd: s(opListJSON, r.typedList(t, jsonClient)),
			floors: []op{r.floorOp(opListProtobufFloor, r.typedList(r.floorT, protobufClient)),
				r.floorOp(opListJSONFloor, r.typedList(r.floorT, jsonClient))}},
	}
}

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

func (r *runner) typedGet(cs kubernetes.Interface) func(context.Context, call) error {
	return func(ctx context.Context, c call) error {
		_, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, listName(c.i%r.cfg.Objects), metav1.GetOptions{})
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
func (r *runner) typedList(t *target, cs func(*target) kubernetes.Interface) func(context.Context, call) error {
	return func(ctx context.Context, _ call) error {
		l, err := cs(t).CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err == nil && len(l.Items) != t.listItems {
			err = fmt.Errorf("list has %d items, want %d", len(l.Items), t.listItems)
		}
		return err
	}
}
