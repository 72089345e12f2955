package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
)

// rootCAConfigMap is the ConfigMap kube-controller-manager's root CA
// publisher (which strata runs) writes in every namespace.
const rootCAConfigMap = "kube-root-ca.crt"

// listTimeout bounds the wait for the watch cache to hold every object.
const listTimeout = 10 * time.Second

func listName(i int) string         { return fmt.Sprintf("list-%05d", i) }
func patchName(worker int) string   { return fmt.Sprintf("patch-%03d", worker) }
func updateName(worker int) string  { return fmt.Sprintf("update-%03d", worker) }
func rawListKey(name string) string { return layout.RawPrefix + "list/" + name }
func rawCASKey(worker int) string   { return fmt.Sprintf("%scas/%03d", layout.RawPrefix, worker) }

// configMap is the object every ConfigMap of the run is: a label, a
// counter that patches change and a payload of Config.DataBytes.
func (r *runner) configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "strata-bench"}},
		Data:       map[string]string{"counter": "0", "payload": r.payload},
	}
}

// payload is n pseudo-random letters and digits (the same in every run).
func payload(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.Grow(n)
	for range n {
		b.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// setup creates, on every target, the namespace and its Config.Objects
// ConfigMaps and checks that both kinds of list see all of them; then it
// copies the bytes strata stored for them to the raw prefix, so that the
// raw operations read and write the same values.
func (r *runner) setup(ctx context.Context) error {
	r.payload = payload(r.cfg.DataBytes)
	for _, t := range r.env.targets() {
		if err := r.fill(ctx, t); err != nil {
			return err
		}
	}
	return r.copyStored(ctx)
}

// fill creates the namespace and the listed ConfigMaps on t.
func (r *runner) fill(ctx context.Context, t *target) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: layout.Namespace}}
	if _, err := t.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating namespace %s on %s: %w", layout.Namespace, t.side, err)
	}
	err := cell.Parallel(ctx, r.cfg.Objects, 16, func(ctx context.Context, i int) error {
		_, err := t.configMaps().Create(ctx, r.configMap(listName(i)), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: creating the listed ConfigMaps on %s: %w", t.side, err)
	}
	for _, rv := range []string{"", "0"} {
		if err := r.checkList(ctx, t, rv); err != nil {
			return err
		}
	}
	return nil
}

// checkList waits until a list with resourceVersion rv holds every listed
// ConfigMap (an RV=0 list is served by the watch cache, which may lag).
func (r *runner) checkList(ctx context.Context, t *target, rv string) error {
	deadline := time.Now().Add(listTimeout)
	for {
		l, err := t.configMaps().List(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return fmt.Errorf("bench: listing %s on %s (resourceVersion %q): %w", layout.Namespace, t.side, rv, err)
		}
		listed, rootCA := 0, false
		for _, item := range l.Items {
			if strings.HasPrefix(item.Name, listName(0)[:5]) {
				listed++
			}
			rootCA = rootCA || item.Name == rootCAConfigMap
		}
		// strata's root CA publisher, when it runs, puts kube-root-ca.crt
		// in every namespace once the server is ready, so possibly after
		// the namespace's ConfigMaps: the count taken before it appears
		// would be short.
		if listed == r.cfg.Objects && (rootCA || t.side != sideStrata || !r.cfg.publishesRootCA()) {
			t.listItems = len(l.Items)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: a list of %s on %s (resourceVersion %q) has %d items after %s, want %d",
				layout.Namespace, t.side, rv, listed, listTimeout, r.cfg.Objects)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// copyStored reads what strata stored for the listed ConfigMaps and puts
// the same bytes under the raw prefix. Without strata (kube-apiserver
// stores protobuf, which the raw watch cannot patch), the bytes are the
// ConfigMap as strata would store it, encoded here.
func (r *runner) copyStored(ctx context.Context) error {
	resp, err := r.env.raw.Get(ctx, layout.StoredPrefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("bench: reading %s from etcd: %w", layout.StoredPrefix, err)
	}
	kvs := resp.Kvs
	if r.env.strata == nil {
		if kvs, err = r.encodedConfigMaps(); err != nil {
			return err
		}
	}
	// The namespace also holds the kube-root-ca.crt ConfigMap when
	// strata's root CA publisher runs: strata then lists it, so it is
	// copied too, and the operations' value is a listed ConfigMap's.
	listed := 0
	for _, kv := range kvs {
		if strings.HasPrefix(string(kv.Key), layout.StoredPrefix+listName(0)[:5]) {
			if listed == 0 {
				r.value = string(kv.Value)
			}
			listed++
		}
	}
	if listed != r.cfg.Objects {
		return fmt.Errorf("bench: etcd holds %d listed keys under %s, want %d (has strata's key layout changed?)",
			listed, layout.StoredPrefix, r.cfg.Objects)
	}
	r.rep.StoredBytes = len(r.value)
	r.rawItems = len(kvs)
	err = cell.Parallel(ctx, len(kvs), 16, func(ctx context.Context, i int) error {
		kv := kvs[i]
		_, err := r.env.raw.Put(ctx, rawListKey(strings.TrimPrefix(string(kv.Key), layout.StoredPrefix)), string(kv.Value))
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: copying the stored values to %s: %w", layout.RawPrefix, err)
	}
	return nil
}

// encodedConfigMaps are the listed ConfigMaps as JSON under strata's keys.
func (r *runner) encodedConfigMaps() ([]*mvccpb.KeyValue, error) {
	kvs := make([]*mvccpb.KeyValue, r.cfg.Objects)
	for i := range kvs {
		cm := r.configMap(listName(i))
		cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
		cm.Namespace, cm.UID = layout.Namespace, types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		cm.CreationTimestamp = metav1.Now()
		b, err := json.Marshal(cm)
		if err != nil {
			return nil, fmt.Errorf("bench: encoding a ConfigMap: %w", err)
		}
		kvs[i] = &mvccpb.KeyValue{Key: []byte(layout.StoredPrefix + cm.Name), Value: b}
	}
	return kvs, nil
}

// get reads a listed ConfigMap with resourceVersion rv.
func (r *runner) get(t *target, rv string) func(context.Context, cell.Call) error {
	return r.getIn(t, layout.Namespace, rv)
}

// getIn gets the listed namespace's names from namespace ns of t (where
// the floor answers them after a revision read, bench/floor).
func (r *runner) getIn(t *target, ns, rv string) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		_, err := t.cs.CoreV1().ConfigMaps(ns).Get(ctx, listName(c.I%r.cfg.Objects), metav1.GetOptions{ResourceVersion: rv})
		return err
	}
}

// list lists the namespace with resourceVersion rv, decoding the
// response only when Config.DecodeLists is set.
func (r *runner) list(t *target, rv string) func(context.Context, cell.Call) error {
	return r.listIn(t, layout.Namespace, rv)
}

// listIn lists namespace ns of t (where the floor answers the listed
// namespace's ConfigMaps after a revision read, bench/floor).
func (r *runner) listIn(t *target, ns, rv string) func(context.Context, cell.Call) error {
	if r.cfg.DecodeLists {
		return func(ctx context.Context, _ cell.Call) error {
			l, err := t.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err == nil && len(l.Items) != t.listItems {
				err = fmt.Errorf("list has %d items, want %d", len(l.Items), t.listItems)
			}
			return err
		}
	}
	return func(ctx context.Context, _ cell.Call) error {
		body, err := t.cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").
			VersionedParams(&metav1.ListOptions{ResourceVersion: rv}, scheme.ParameterCodec).Do(ctx).Raw()
		if err == nil && len(body) < r.cfg.Objects*r.cfg.DataBytes {
			err = fmt.Errorf("list response of %d bytes is too short for %d objects", len(body), r.cfg.Objects)
		}
		return err
	}
}

func (r *runner) create(t *target) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		_, err := t.configMaps().Create(ctx, r.configMap(fmt.Sprintf("create-c%d-%d", c.Conc, c.I)), metav1.CreateOptions{})
		return err
	}
}

// preparePatch creates one ConfigMap per client of the largest cell.
func (r *runner) preparePatch(t *target) func(context.Context) error {
	return func(ctx context.Context) error {
		return cell.Parallel(ctx, slices.Max(r.cfg.Concurrency), 16, func(ctx context.Context, w int) error {
			_, err := t.configMaps().Create(ctx, r.configMap(patchName(w)), metav1.CreateOptions{})
			return err
		})
	}
}

// patch changes the counter of the client's own ConfigMap by a strategic
// merge patch.
func (r *runner) patch(t *target) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		body := fmt.Appendf(nil, `{"data":{"counter":"%d"}}`, r.counter.Add(1))
		_, err := t.configMaps().Patch(ctx, patchName(c.Worker), types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	}
}

// prepareUpdate creates one ConfigMap per client of the largest cell,
// which that client then updates.
func (r *runner) prepareUpdate(t *target) func(context.Context) error {
	return func(ctx context.Context) error {
		t.updated = make([]*corev1.ConfigMap, slices.Max(r.cfg.Concurrency))
		return cell.Parallel(ctx, len(t.updated), 16, func(ctx context.Context, w int) error {
			cm, err := t.configMaps().Create(ctx, r.configMap(updateName(w)), metav1.CreateOptions{})
			t.updated[w] = cm
			return err
		})
	}
}

// update changes the counter of the client's own ConfigMap by a PUT of
// the object it last wrote (so with its resourceVersion: a
// compare-and-swap, as controllers update).
func (r *runner) update(t *target) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		cm := t.updated[c.Worker].DeepCopy()
		cm.Data["counter"] = strconv.FormatInt(r.counter.Add(1), 10)
		got, err := t.configMaps().Update(ctx, cm, metav1.UpdateOptions{})
		if err == nil {
			t.updated[c.Worker] = got
		}
		return err
	}
}

// rawGet reads a raw copy of a listed ConfigMap, linearizably or not.
func (r *runner) rawGet(serializable bool) func(context.Context, cell.Call) error {
	var opts []clientv3.OpOption
	if serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	return func(ctx context.Context, c cell.Call) error {
		resp, err := r.env.raw.Get(ctx, rawListKey(listName(c.I%r.cfg.Objects)), opts...)
		if err == nil && len(resp.Kvs) != 1 {
			err = errors.New("key not found")
		}
		return err
	}
}

// rawRange reads every raw copy of the listed ConfigMaps in one range.
func (r *runner) rawRange(serializable bool) func(context.Context, cell.Call) error {
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	return func(ctx context.Context, _ cell.Call) error {
		resp, err := r.env.raw.Get(ctx, layout.RawPrefix+"list/", opts...)
		if err == nil && len(resp.Kvs) != r.rawItems {
			err = fmt.Errorf("range has %d keys, want %d", len(resp.Kvs), r.rawItems)
		}
		return err
	}
}

// rawPut is a create: a put if the key has never been created.
func (r *runner) rawPut(ctx context.Context, c cell.Call) error {
	return layout.PutIfAbsent(ctx, r.env.raw, fmt.Sprintf("%screate/c%d-%d", layout.RawPrefix, c.Conc, c.I), r.value)
}

// prepareCAS puts one key per client of the largest cell.
func (r *runner) prepareCAS(ctx context.Context) error {
	return cell.Parallel(ctx, slices.Max(r.cfg.Concurrency), 16, func(ctx context.Context, w int) error {
		_, err := r.env.raw.Put(ctx, rawCASKey(w), r.value)
		return err
	})
}

// rawCAS reads the client's own key (linearizably) and writes it back if
// it has not changed since: the etcd work of an update.
func (r *runner) rawCAS(ctx context.Context, c cell.Call) error {
	key := rawCASKey(c.Worker)
	get, err := r.env.raw.Get(ctx, key)
	if err != nil {
		return err
	}
	if len(get.Kvs) != 1 {
		return fmt.Errorf("%s not found", key)
	}
	txn, err := r.env.raw.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", get.Kvs[0].ModRevision)).
		Then(clientv3.OpPut(key, r.value)).Commit()
	if err == nil && !txn.Succeeded {
		err = fmt.Errorf("%s changed between the read and the write", key)
	}
	return err
}
