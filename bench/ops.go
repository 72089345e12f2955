package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Where the objects live.
const (
	namespace = "bench"
	// storedPrefix is where strata keeps the namespace's ConfigMaps
	// (kube-apiserver's layout, /registry/{resource}/{namespace}/).
	storedPrefix = "/registry/configmaps/" + namespace + "/"
	// rawPrefix is where the raw etcd operations write, outside
	// strata's prefixes (so no watch cache sees them).
	rawPrefix = "/bench-raw/"
)

// Operation names, as the report shows them.
const (
	opGet      = "get"
	opList     = "list"
	opListRV0  = "list-rv0"
	opCreate   = "create"
	opPatch    = "patch"
	opApply    = "apply"
	opApply2   = "apply-2"
	opWatch    = "watch"
	opRange    = "range"
	opRangeSer = "range-serializable"
	opPut      = "put"
	opReadCAS  = "read+cas"
	sideStrata = "strata"
	sideEtcd   = "etcd"
)

// listTimeout bounds the wait for the watch cache to hold every object.
const listTimeout = 10 * time.Second

// pairs are the compared operations, in the order they run. Creates and
// patches come after the lists and the protobuf cells (which list too), so
// that the listed namespace holds exactly Config.Objects ConfigMaps while
// it is listed.
func (r *runner) pairs() []pair {
	lists := []pair{
		{strata: op{side: sideStrata, name: opGet, run: r.strataGet}, etcd: op{side: sideEtcd, name: opGet, run: r.rawGet}},
		{strata: op{side: sideStrata, name: opList, run: r.strataList("")}, etcd: op{side: sideEtcd, name: opRange, run: r.rawRange(false)}},
		{strata: op{side: sideStrata, name: opListRV0, run: r.strataList("0")}, etcd: op{side: sideEtcd, name: opRangeSer, run: r.rawRange(true)}},
	}
	writes := []pair{
		{strata: op{side: sideStrata, name: opCreate, run: r.strataCreate}, etcd: op{side: sideEtcd, name: opPut, run: r.rawPut},
			floor: &op{side: sideFloor, name: opCreateFloor, prepare: r.prepareFloor, run: r.floorCreate}},
		{strata: op{side: sideStrata, name: opPatch, prepare: r.preparePatch, run: r.strataPatch},
			etcd: op{side: sideEtcd, name: opReadCAS, prepare: r.prepareCAS, run: r.rawCAS},
			more: []op{{side: sideStrata, name: opApply, prepare: r.prepareApply, run: r.strataApply(1)},
				{side: sideStrata, name: opApply2, run: r.strataApply(2)}}},
	}
	return slices.Concat(lists, r.protobufPairs(), r.rbacPairs(), writes, r.admissionPairs())
}

func listName(i int) string         { return fmt.Sprintf("list-%05d", i) }
func patchName(worker int) string   { return fmt.Sprintf("patch-%03d", worker) }
func rawListKey(name string) string { return rawPrefix + "list/" + name }
func rawCASKey(worker int) string   { return fmt.Sprintf("%scas/%03d", rawPrefix, worker) }

func (r *runner) configMaps() typedcorev1.ConfigMapInterface {
	return r.env.cs.CoreV1().ConfigMaps(namespace)
}

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

// setup creates the namespace and its Config.Objects ConfigMaps, checks
// that both kinds of list see all of them, and copies the bytes strata
// stored for them to the raw prefix, so that the raw operations read and
// write the same values.
func (r *runner) setup(ctx context.Context) error {
	r.payload = payload(r.cfg.DataBytes)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := r.env.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating namespace %s: %w", namespace, err)
	}
	err := parallel(ctx, r.cfg.Objects, 16, func(ctx context.Context, i int) error {
		_, err := r.configMaps().Create(ctx, r.configMap(listName(i)), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: creating the listed ConfigMaps: %w", err)
	}
	for _, rv := range []string{"", "0"} {
		if err := r.checkList(ctx, rv); err != nil {
			return err
		}
	}
	return r.copyStored(ctx)
}

// checkList waits until a list with resourceVersion rv holds every listed
// ConfigMap (an RV=0 list is served by the watch cache, which may lag).
func (r *runner) checkList(ctx context.Context, rv string) error {
	deadline := time.Now().Add(listTimeout)
	for {
		l, err := r.configMaps().List(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return fmt.Errorf("bench: listing %s (resourceVersion %q): %w", namespace, rv, err)
		}
		listed := 0
		for _, item := range l.Items {
			if strings.HasPrefix(item.Name, listName(0)[:5]) {
				listed++
			}
		}
		if listed == r.cfg.Objects {
			r.listItems = len(l.Items)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: a list of %s (resourceVersion %q) has %d items after %s, want %d",
				namespace, rv, listed, listTimeout, r.cfg.Objects)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// copyStored reads what strata stored for the listed ConfigMaps and puts
// the same bytes under the raw prefix.
func (r *runner) copyStored(ctx context.Context) error {
	resp, err := r.env.raw.Get(ctx, storedPrefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("bench: reading %s from etcd: %w", storedPrefix, err)
	}
	// The namespace also holds the kube-root-ca.crt ConfigMap that the
	// root CA publisher puts in every namespace: both sides list it, so it
	// is copied too, and the operations' value is a listed ConfigMap's.
	listed := 0
	for _, kv := range resp.Kvs {
		if strings.HasPrefix(string(kv.Key), storedPrefix+listName(0)[:5]) {
			if listed == 0 {
				r.value = string(kv.Value)
			}
			listed++
		}
	}
	if listed != r.cfg.Objects {
		return fmt.Errorf("bench: etcd holds %d listed keys under %s, want %d (has strata's key layout changed?)",
			listed, storedPrefix, r.cfg.Objects)
	}
	r.rep.StoredBytes = len(r.value)
	err = parallel(ctx, len(resp.Kvs), 16, func(ctx context.Context, i int) error {
		kv := resp.Kvs[i]
		_, err := r.env.raw.Put(ctx, rawListKey(strings.TrimPrefix(string(kv.Key), storedPrefix)), string(kv.Value))
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: copying the stored values to %s: %w", rawPrefix, err)
	}
	return nil
}

func (r *runner) strataGet(ctx context.Context, c call) error {
	_, err := r.configMaps().Get(ctx, listName(c.i%r.cfg.Objects), metav1.GetOptions{})
	return err
}

// strataList lists the namespace with resourceVersion rv, decoding the
// response only when Config.DecodeLists is set.
func (r *runner) strataList(rv string) func(context.Context, call) error {
	if r.cfg.DecodeLists {
		return func(ctx context.Context, _ call) error {
			l, err := r.configMaps().List(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err == nil && len(l.Items) != r.listItems {
				err = fmt.Errorf("list has %d items, want %d", len(l.Items), r.listItems)
			}
			return err
		}
	}
	return func(ctx context.Context, _ call) error {
		body, err := r.env.cs.CoreV1().RESTClient().Get().Namespace(namespace).Resource("configmaps").
			VersionedParams(&metav1.ListOptions{ResourceVersion: rv}, scheme.ParameterCodec).Do(ctx).Raw()
		if err == nil && len(body) < r.cfg.Objects*r.cfg.DataBytes {
			err = fmt.Errorf("list response of %d bytes is too short for %d objects", len(body), r.cfg.Objects)
		}
		return err
	}
}

func (r *runner) strataCreate(ctx context.Context, c call) error {
	_, err := r.configMaps().Create(ctx, r.configMap(fmt.Sprintf("create-c%d-%d", c.conc, c.i)), metav1.CreateOptions{})
	return err
}

// preparePatch creates one ConfigMap per client of the largest cell.
func (r *runner) preparePatch(ctx context.Context) error {
	return parallel(ctx, slices.Max(r.cfg.Concurrency), 16, func(ctx context.Context, w int) error {
		_, err := r.configMaps().Create(ctx, r.configMap(patchName(w)), metav1.CreateOptions{})
		return err
	})
}

// strataPatch changes the counter of the client's own ConfigMap by a
// strategic merge patch.
func (r *runner) strataPatch(ctx context.Context, c call) error {
	body := fmt.Appendf(nil, `{"data":{"counter":"%d"}}`, r.counter.Add(1))
	_, err := r.configMaps().Patch(ctx, patchName(c.worker), types.StrategicMergePatchType, body, metav1.PatchOptions{})
	return err
}

func (r *runner) rawGet(ctx context.Context, c call) error {
	resp, err := r.env.raw.Get(ctx, rawListKey(listName(c.i%r.cfg.Objects)))
	if err == nil && len(resp.Kvs) != 1 {
		err = errors.New("key not found")
	}
	return err
}

// rawRange reads every raw copy of the listed ConfigMaps in one range.
func (r *runner) rawRange(serializable bool) func(context.Context, call) error {
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	return func(ctx context.Context, _ call) error {
		resp, err := r.env.raw.Get(ctx, rawPrefix+"list/", opts...)
		if err == nil && len(resp.Kvs) != r.listItems {
			err = fmt.Errorf("range has %d keys, want %d", len(resp.Kvs), r.listItems)
		}
		return err
	}
}

// rawPut is a create: a put if the key has never been created.
func (r *runner) rawPut(ctx context.Context, c call) error {
	return putIfAbsent(ctx, r.env.raw, fmt.Sprintf("%screate/c%d-%d", rawPrefix, c.conc, c.i), r.value)
}

// putIfAbsent puts value at key if the key has never been created: the
// etcd work of a create.
func putIfAbsent(ctx context.Context, kv clientv3.KV, key, value string) error {
	resp, err := kv.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, value)).Commit()
	if err == nil && !resp.Succeeded {
		err = fmt.Errorf("%s exists", key)
	}
	return err
}

// prepareCAS puts one key per client of the largest cell.
func (r *runner) prepareCAS(ctx context.Context) error {
	return parallel(ctx, slices.Max(r.cfg.Concurrency), 16, func(ctx context.Context, w int) error {
		_, err := r.env.raw.Put(ctx, rawCASKey(w), r.value)
		return err
	})
}

// rawCAS reads the client's own key (linearizably) and writes it back if
// it has not changed since: the etcd work of an update.
func (r *runner) rawCAS(ctx context.Context, c call) error {
	key := rawCASKey(c.worker)
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
