package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrCorrupt is an object whose stored bytes do not decode. Reads of it
// fail; only DeleteCorrupt removes it.
var ErrCorrupt = errors.New("storage: corrupt object")

// Codes and words of kube-apiserver's storage.StorageError, whose text its
// answers about corrupt objects carry.
const (
	storageCodeInvalidObj = 4
	storageCodeCorruptObj = 7
)

// storageErrorText is the text of kube-apiserver's StorageError.
func storageErrorText(code int, what, key string, inner any) string {
	return fmt.Sprintf("StorageError: %s, Code: %d, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %v", what, code, key, inner)
}

// corruptObject is kube-apiserver's answer to a read of an object that
// does not decode: InternalError of its StorageError "corrupt object".
func corruptObject(key string, rev int64, cause error) *Error {
	text := storageErrorText(storageCodeCorruptObj, "corrupt object", key,
		fmt.Sprintf("object not decodable revision=%d: %v", rev, cause))
	return newError(ErrCorrupt, apierrors.NewInternalError(errors.New(text)), cause)
}

// maxCorruptInList caps the corrupt objects one list names, as
// kube-apiserver's aggregator does.
const maxCorruptInList = 100

// storeReadError is kube-apiserver's answer to a list that meets corrupt
// objects: 500 StorageReadError naming the first, and each (up to
// maxCorruptInList) in a cause whose field is its key.
func storeReadError(gr schema.GroupResource, keys []string, errs map[string]*Error) error {
	sort.Strings(keys)
	details := &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: "list"}
	for i, key := range keys {
		if i == maxCorruptInList {
			details.Causes = append(details.Causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany,
				Message: "too many errors, the list is truncated"})
			keys = keys[:i]
			break
		}
		details.Causes = append(details.Causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse,
			Field: key, Message: storageText(errs[key])})
	}
	msg := fmt.Sprintf("failed to read one or more %s from the storage: %s", gr, storageText(errs[keys[0]]))
	if len(keys) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(keys)-1)
	}
	st := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonStoreReadError, Details: details, Message: msg}}
	return newError(ErrCorrupt, st, errs[keys[0]])
}

// storageText is the StorageError text inside a corruptObject error.
func storageText(e *Error) string {
	return strings.TrimPrefix(e.status.ErrStatus.Message, "Internal error occurred: ")
}

// DeleteCorrupt removes an object whose stored bytes do not decode,
// without reading it: no preconditions, finalizers or hooks, as
// kube-apiserver's unsafe deletion (DeleteOptions
// ignoreStoreReadErrorWithClusterBreakingPotential). An object that
// decodes is refused with kube-apiserver's 409; dryRun checks only.
func (s *Store) DeleteCorrupt(ctx context.Context, namespace, name string, dryRun bool) error {
	key, err := s.objectKey(namespace, name)
	if err != nil {
		return err
	}
	for {
		start := time.Now()
		resp, err := s.client.Get(ctx, key)
		s.observe("get", start, err)
		if err != nil {
			return internal(err, "storage: reading %s", key)
		}
		if len(resp.Kvs) == 0 {
			return notFound(s.cfg.Resource, name)
		}
		kv := resp.Kvs[0]
		if _, err := s.decodeKV(kv); err == nil {
			why := errors.New(storageErrorText(storageCodeInvalidObj, "invalid object", key,
				"unsafe deletion is not allowed because the object is decodable from storage"))
			return conflict(s.cfg.Resource, name, why)
		}
		if dryRun {
			return nil
		}
		start = time.Now()
		txn, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(key)).
			Commit()
		s.observe("delete", start, err)
		if err != nil {
			return internal(err, "storage: deleting %s", key)
		}
		if txn.Succeeded {
			s.log.Warn("deleted an undecodable object without reading it", "key", key, "revision", kv.ModRevision)
			return nil
		}
		// Rewritten meanwhile: judge the new bytes.
	}
}

// corruptErr returns the error of reading key when its newest bytes do not
// decode, or nil.
func (c *watchCache) corruptErr(key string) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e, ok := c.corrupt[key]; ok {
		return e
	}
	return nil
}

// corruptUnderLocked is kube-apiserver's list error when objects under
// prefix do not decode, or nil.
func (c *watchCache) corruptUnderLocked(prefix string) error {
	var keys []string
	for key := range c.corrupt {
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return storeReadError(c.s.cfg.Resource, keys, c.corrupt)
}

// asCorrupt is decodeKV's error as the store's (always, for ErrCorrupt).
func asCorrupt(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return corruptObject("", 0, err)
}
