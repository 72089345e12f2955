package storage

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// GuaranteedUpdate implements Interface.
func (s *Store) GuaranteedUpdate(ctx context.Context, namespace, name string, pre *Preconditions, tryUpdate UpdateFunc) (*unstructured.Unstructured, error) {
	key, err := s.objectKey(namespace, name)
	if err != nil {
		return nil, err
	}
	// The watch cache's copy is the first guess, as in kube-apiserver: the
	// compare-and-swap below checks it is current, so an up-to-date cache
	// saves a read of etcd per update. A copy older than the store's own
	// last update of the key is no guess (recentWrites).
	cur, modRev := s.cachedForUpdate(key)
	fresh := false
	// stored is the apiVersion etcd holds cur in, known once fresh.
	var stored string
	if cur == nil {
		if cur, modRev, stored, err = s.readLatest(ctx, key, name); err != nil {
			return nil, err
		}
		fresh = true
	}
	for {
		err := pre.Check(s.cfg.Resource, cur)
		var next *unstructured.Unstructured
		var data []byte
		if err == nil {
			next, data, err = s.computeUpdate(key, cur, fresh && s.staleVersion(stored), tryUpdate)
		}
		if isConversionError(err) {
			// The new object cannot be stored: judging again on etcd's
			// copy would not change that (kube-apiserver's update returns
			// its encoding error at once too).
			return nil, err
		}
		if (err != nil || data == nil) && !fresh {
			// A refusal or a no-op judged on the cache's copy may be
			// stale: judge again on etcd's.
			if cur, modRev, stored, err = s.readLatest(ctx, key, name); err != nil {
				return nil, err
			}
			fresh = true
			continue
		}
		if err != nil {
			return nil, err
		}
		if data == nil { // unchanged: nothing to write
			return cur, nil
		}
		start := time.Now()
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
			Then(clientv3.OpPut(key, string(data))).
			Else(clientv3.OpGet(key)).
			Commit()
		s.observe("update", start, err)
		if err != nil {
			return nil, s.writeError(err, key)
		}
		if resp.Succeeded {
			s.written.note(key, resp.Header.Revision, s.cache.revision)
			next.SetResourceVersion(strconv.FormatInt(resp.Header.Revision, 10))
			return next, nil
		}
		// Lost a race: retry on the fresh state (NotFound if it was deleted).
		if cur, modRev, stored, err = s.fromTxnGet(resp, key, name); err != nil {
			return nil, err
		}
		fresh = true
	}
}

// computeUpdate runs tryUpdate on a copy of cur and returns the new object
// and its encoding, or nil data when nothing changed and cur is not stale
// (stored in a version other than the storage version).
func (s *Store) computeUpdate(key string, cur *unstructured.Unstructured, stale bool, tryUpdate UpdateFunc) (*unstructured.Unstructured, []byte, error) {
	next, err := tryUpdate(cur.DeepCopy())
	if err != nil {
		return nil, nil, err
	}
	if next == nil || next.Object == nil {
		return nil, nil, badRequest("%s %s: the update produced no object", s.cfg.Resource, key)
	}
	if next.GetName() != cur.GetName() || next.GetNamespace() != cur.GetNamespace() {
		return nil, nil, invalidObject(s.cfg.Kind.GroupKind(), cur.GetName(), field.ErrorList{field.Invalid(
			field.NewPath("metadata"), next.GetNamespace()+"/"+next.GetName(),
			fmt.Sprintf("an update may not change the namespace or name of %s", key))})
	}
	data, err := s.encodeChecked(key, next)
	if err != nil {
		return nil, nil, err
	}
	if !stale && s.unchanged(cur, next, data) {
		return cur, nil, nil
	}
	return next, data, nil
}

// unchanged says whether next, encoded as data, is stored as cur is. A
// converted store compares the objects as served, which spares a second
// conversion (a webhook call) of cur.
func (s *Store) unchanged(cur, next *unstructured.Unstructured, data []byte) bool {
	if s.cfg.Convert != nil {
		return equality.Semantic.DeepEqual(withoutResourceVersion(cur.Object), withoutResourceVersion(next.Object))
	}
	old, err := s.encodeObj(cur)
	return err == nil && bytes.Equal(old, data)
}

// fromTxnGet decodes the Else branch of a failed compare-and-swap; it also
// returns the apiVersion the object is stored with.
func (s *Store) fromTxnGet(resp *clientv3.TxnResponse, key, name string) (*unstructured.Unstructured, int64, string, error) {
	if len(resp.Responses) == 0 {
		return nil, 0, "", internal(fmt.Errorf("no read in the failed transaction"), "storage: updating %s", key)
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil, 0, "", notFound(s.cfg.Resource, name)
	}
	obj, stored, err := s.decodeStored(kvs[0])
	return obj, kvs[0].ModRevision, stored, err
}

// Check compares uid and resourceVersion with cur, an object of resource
// gr; a mismatch is ErrConflict naming both values, with kube-apiserver's
// messages. A nil Preconditions always holds.
func (pre *Preconditions) Check(gr schema.GroupResource, cur *unstructured.Unstructured) error {
	if pre == nil {
		return nil
	}
	if pre.UID != "" && pre.UID != cur.GetUID() {
		return conflict(gr, cur.GetName(), fmt.Errorf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", pre.UID, cur.GetUID()))
	}
	if pre.ResourceVersion != "" && pre.ResourceVersion != cur.GetResourceVersion() {
		return conflict(gr, cur.GetName(), fmt.Errorf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
			pre.ResourceVersion, cur.GetResourceVersion()))
	}
	return nil
}
