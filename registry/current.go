package registry

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Current is the stored object an update, patch or apply starts from.
// Storage holds it unstructured; the field manager reads it in the kind's
// external version and the strategy in the internal one. Converting an
// unstructured object to a typed one walks it by reflection, a large
// share of an apply's CPU if done for each reader (the field manager and
// the strategy), so Current converts it once and both read that.
type Current struct {
	*unstructured.Unstructured
	kind  *Kind
	typed runtime.Object // nil until converted, and if the conversion failed
	err   error
}

// Current wraps u, a stored object of the kind, for one attempt of an
// update.
func (k *Kind) Current(u *unstructured.Unstructured) *Current {
	return &Current{Unstructured: u, kind: k}
}

// Typed is the object in the kind's external typed version (for a custom
// kind, the unstructured object), converted at the first call. Callers
// read it and do not change it.
func (c *Current) Typed() (runtime.Object, error) {
	if c.typed == nil && c.err == nil {
		c.typed, c.err = c.kind.Typed(c.Unstructured)
	}
	return c.typed, c.err
}

// Live is what the field manager is given as the live object: the typed
// object, or the unstructured one if it does not convert (the field
// manager then reports why).
func (c *Current) Live() runtime.Object {
	if typed, err := c.Typed(); err == nil {
		return typed
	}
	return c.Unstructured
}

// internal is the object in the kind's internal version, converted from
// the typed one. Conversion may share memory with it, which stays
// unchanged: the field manager copies what it is given.
func (c *Current) internal() (runtime.Object, error) {
	if c.kind.custom != nil {
		return c.DeepCopy(), nil
	}
	typed, err := c.Typed()
	if err != nil {
		return nil, err
	}
	return toInternal(typed, c.kind.GVK)
}

// Prepared is an object PrepareCreate or PrepareUpdate made ready to
// store: unstructured, as storage keeps it, and, for a built-in kind, the
// typed object in the kind's version it was converted from.
type Prepared struct {
	*unstructured.Unstructured
	typed runtime.Object
}

// ProtobufOf is the protobuf message of p as stored with resourceVersion
// rv, as ProtobufMessage(stored.Object) would return it. It encodes the
// typed object p was made from rather than converting the unstructured
// one back by reflection, a large share of a create's CPU; ok is false
// when there is none (a custom kind).
func (p *Prepared) ProtobufOf(rv string) (data []byte, ok bool, err error) {
	msg, isMsg := p.typed.(protoMessage)
	m, hasMeta := p.typed.(interface{ SetResourceVersion(string) })
	if !isMsg || !hasMeta {
		return nil, false, nil
	}
	m.SetResourceVersion(rv)
	data, err = msg.Marshal()
	if err != nil {
		return nil, true, fmt.Errorf("registry: encoding %s as protobuf: %w", p.typed.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return data, true, nil
}
