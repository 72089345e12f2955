package storage

import (
	"errors"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/stratadev/strata/internal/jsondec"
	"github.com/stratadev/strata/internal/jsonenc"
)

// encode returns the stored form of obj: its JSON without
// metadata.resourceVersion (the revision is etcd's, not the document's),
// with apiVersion replaced when not "". obj is not changed.
func encode(obj *unstructured.Unstructured, apiVersion string) ([]byte, error) {
	content := withoutResourceVersion(obj.Object)
	if apiVersion != "" {
		content["apiVersion"] = apiVersion
	}
	data, err := jsonenc.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encoding %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return data, nil
}

// withoutResourceVersion is a shallow copy of an object's content without
// metadata.resourceVersion, which the stored form has not either.
func withoutResourceVersion(content map[string]any) map[string]any {
	out := make(map[string]any, len(content))
	for k, v := range content {
		out[k] = v
	}
	if meta, ok := content["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "resourceVersion" {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// decode parses a stored object and sets metadata.resourceVersion to rev.
// Integers decode as int64, as apimachinery's unstructured code expects.
// jsondec decodes what it takes on, twice as fast; apimachinery's decoder
// the rest, and says what is wrong with what it refuses. The managed
// fields are taken from reuse when it holds a list decoded from the same
// bytes (jsondec.ObjectReusing); with nil they are decoded.
func decode(value []byte, rev int64, reuse *jsondec.Reuse) (*unstructured.Unstructured, error) {
	content, ok := jsondec.ObjectReusing(value, reuse)
	if !ok {
		if err := utiljson.Unmarshal(value, &content); err != nil {
			return nil, fmt.Errorf("json: %w", err)
		}
	}
	if content == nil {
		return nil, errors.New("json: not an object")
	}
	obj := &unstructured.Unstructured{Object: content}
	obj.SetResourceVersion(strconv.FormatInt(rev, 10))
	return obj, nil
}

// Conversion converts the objects of a store between their served and
// stored versions. Both functions return new objects and keep metadata
// (resourceVersion included).
type Conversion struct {
	ToStored, FromStored func(*unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// encodeObj is encode of obj in its stored version. A conversion that
// fails is a 500 with the converter's words, as kube-apiserver answers a
// write its storage codec cannot encode (a conversion webhook's failure).
func (s *Store) encodeObj(obj *unstructured.Unstructured) ([]byte, error) {
	if c := s.cfg.Convert; c != nil {
		stored, err := c.ToStored(obj)
		if err != nil {
			return nil, conversionFailed(err)
		}
		obj = stored
	}
	return encode(obj, s.versions.stored)
}

// decodeKV decodes an etcd key-value at its modification revision. Any
// failure is ErrCorrupt, as kube-apiserver deems every decoding error.
func (s *Store) decodeKV(kv *mvccpb.KeyValue) (*unstructured.Unstructured, error) {
	obj, _, err := s.decodeStored(kv)
	return obj, err
}

// decodeCached is decodeKV for the watch cache, whose objects are never
// changed in place: they may share their managed fields (Store.reuse).
func (s *Store) decodeCached(kv *mvccpb.KeyValue) (*unstructured.Unstructured, error) {
	obj, _, err := s.decodeStoredReusing(kv, s.reuse)
	return obj, err
}

// decodeStored is decodeKV that also returns the apiVersion the object is
// stored with.
func (s *Store) decodeStored(kv *mvccpb.KeyValue) (*unstructured.Unstructured, string, error) {
	return s.decodeStoredReusing(kv, nil)
}

// decodeStoredReusing is decodeStored with the managed fields taken from
// reuse (see decode).
func (s *Store) decodeStoredReusing(kv *mvccpb.KeyValue, reuse *jsondec.Reuse) (*unstructured.Unstructured, string, error) {
	obj, err := decode(kv.Value, kv.ModRevision, reuse)
	if err != nil {
		return nil, "", corruptObject(string(kv.Key), kv.ModRevision, err)
	}
	stored := obj.GetAPIVersion()
	if c := s.cfg.Convert; c != nil {
		// The converter's error is the cause as kube-apiserver words it
		// ("conversion webhook for ... failed: ...").
		if obj, err = c.FromStored(obj); err != nil {
			return nil, "", corruptObject(string(kv.Key), kv.ModRevision, conversionError{err})
		}
	}
	if s.versions.served != "" {
		// Versions of one resource differ only in apiVersion (the None
		// conversion of custom resources), or were converted above.
		obj.SetAPIVersion(s.versions.served)
	}
	if s.cfg.OnRead != nil {
		if err := s.cfg.OnRead(obj); err != nil {
			return nil, "", corruptObject(string(kv.Key), kv.ModRevision, err)
		}
	}
	return obj, stored, nil
}

// staleVersion says whether an object stored with apiVersion stored must
// be written again even if unchanged: it is not in the storage version
// (the CRD's changed since), and kube-apiserver rewrites such an object on
// any update, which is how storage versions are migrated.
func (s *Store) staleVersion(stored string) bool {
	if s.cfg.StorageVersion == "" {
		return false
	}
	want := s.versions.stored
	if want == "" {
		want = s.versions.served
	}
	return stored != want
}

// apiVersions are a store's apiVersion rewrites, worked out once.
type apiVersions struct {
	// served is set on every decoded object when Config.StorageVersion is
	// set (objects may have been stored in any version); "" otherwise.
	served string
	// stored is the apiVersion objects are written with when it is not
	// the served one; "" writes them as given.
	stored string
}

func apiVersionsOf(cfg Config) apiVersions {
	var v apiVersions
	if cfg.StorageVersion == "" {
		return v
	}
	v.served = cfg.Kind.GroupVersion().String()
	if cfg.StorageVersion != cfg.Kind.Version {
		v.stored = schema.GroupVersion{Group: cfg.Kind.Group, Version: cfg.StorageVersion}.String()
	}
	return v
}

// withResourceVersion returns a copy of obj whose resourceVersion is rev
// (used for the DELETED event, which carries the deletion revision).
func withResourceVersion(obj *unstructured.Unstructured, rev int64) *unstructured.Unstructured {
	c := obj.DeepCopy()
	c.SetResourceVersion(strconv.FormatInt(rev, 10))
	return c
}
