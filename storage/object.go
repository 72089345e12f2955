package storage

import (
	"errors"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/stratadev/strata/internal/jsonenc"
)

// encode returns the stored form of obj: its JSON without
// metadata.resourceVersion (the revision is etcd's, not the document's),
// with apiVersion replaced when not "". obj is not changed.
func encode(obj *unstructured.Unstructured, apiVersion string) ([]byte, error) {
	content := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		content[k] = v
	}
	if apiVersion != "" {
		content["apiVersion"] = apiVersion
	}
	if meta, ok := obj.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "resourceVersion" {
				m[k] = v
			}
		}
		content["metadata"] = m
	}
	data, err := jsonenc.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encoding %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return data, nil
}

// decode parses a stored object and sets metadata.resourceVersion to rev.
// Integers decode as int64, as apimachinery's unstructured code expects.
func decode(value []byte, rev int64) (*unstructured.Unstructured, error) {
	var content map[string]any
	if err := utiljson.Unmarshal(value, &content); err != nil {
		return nil, fmt.Errorf("json: %w", err)
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

// encodeObj is encode of obj in its stored version.
func (s *Store) encodeObj(obj *unstructured.Unstructured) ([]byte, error) {
	if c := s.cfg.Convert; c != nil {
		stored, err := c.ToStored(obj)
		if err != nil {
			return nil, err
		}
		obj = stored
	}
	return encode(obj, s.versions.stored)
}

// decodeKV decodes an etcd key-value at its modification revision. Any
// failure is ErrCorrupt, as kube-apiserver deems every decoding error.
func (s *Store) decodeKV(kv *mvccpb.KeyValue) (*unstructured.Unstructured, error) {
	obj, err := decode(kv.Value, kv.ModRevision)
	if err != nil {
		return nil, corruptObject(string(kv.Key), kv.ModRevision, err)
	}
	if c := s.cfg.Convert; c != nil {
		if obj, err = c.FromStored(obj); err != nil {
			return nil, corruptObject(string(kv.Key), kv.ModRevision, fmt.Errorf("converting: %w", err))
		}
	}
	if s.versions.served != "" {
		// Versions of one resource differ only in apiVersion (the None
		// conversion of custom resources).
		obj.SetAPIVersion(s.versions.served)
	}
	if s.cfg.OnRead != nil {
		if err := s.cfg.OnRead(obj); err != nil {
			return nil, corruptObject(string(kv.Key), kv.ModRevision, err)
		}
	}
	return obj, nil
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
