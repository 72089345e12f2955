package registry

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/storage"
)

// Viewer serves a subresource whose object is a view of the resource's
// object in another kind (scale: an autoscaling/v1 Scale): a get reads
// the view, and a write of the view is an update of the object through
// its own strategy, as kube-apiserver's ScaleREST does.
type Viewer interface {
	// New is an empty view, which a request's body decodes into.
	New() runtime.Object
	Get(ctx context.Context, ns, name, resourceVersion string) (runtime.Object, error)
	// Update writes the view want computes from the current one; record
	// records the writer's fields on the object (managedFields, under
	// the subresource). ctx comes from the kind's Context.
	Update(ctx context.Context, ns, name string, want ViewChange, record Record, opts WriteOptions) (runtime.Object, error)
}

// ViewApplier is a Viewer that also serves server-side apply of the view.
type ViewApplier interface {
	Viewer
	// Apply applies config, a configuration of the view, for the
	// manager apply names; warnings are the field manager's.
	Apply(ctx context.Context, ns, name string, config []byte, apply fieldmanager.ApplyOptions, opts WriteOptions) (out runtime.Object, warnings []string, err error)
}

// ViewChange computes the view a write asks for from the current one.
type ViewChange func(cur runtime.Object) (runtime.Object, error)

// Record records on obj what a write changed from live.
type Record func(live, obj runtime.Object) runtime.Object

// scaleREST serves the scale subresource, as kube-apiserver does: an
// autoscaling/v1 Scale whose spec.replicas is read from and written to the
// object's spec.replicas (a custom resource's specReplicasPath), with
// status.replicas and status.selector from the object (statusReplicasPath
// and labelSelectorPath).
type scaleREST struct{ s *Store }

func (scaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

func (r scaleREST) Get(ctx context.Context, ns, name, rv string) (runtime.Object, error) {
	obj, err := r.s.storage.Get(ctx, ns, name, storage.GetOptions{ResourceVersion: rv})
	if err != nil {
		return nil, err
	}
	return r.s.kind.ScaleOf(obj)
}

func (r scaleREST) Update(ctx context.Context, ns, name string, want ViewChange, record Record, opts WriteOptions) (runtime.Object, error) {
	kind := r.s.kind
	out, err := r.s.Update(ctx, ns, name, "", func(cur *Current) (runtime.Object, error) {
		old, err := kind.ScaleOf(cur.Unstructured)
		if err != nil {
			return nil, err
		}
		next, err := want(old.DeepCopy())
		if err != nil {
			return nil, err
		}
		sc, ok := next.(*autoscalingv1.Scale)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a Scale: %T", next))
		}
		obj, err := r.scaled(ctx, cur, old, sc, name)
		if err != nil {
			return nil, err
		}
		// The writer owns the replicas from now on, recorded on the
		// object with subresource "scale", as kube-apiserver's scale
		// handler records it.
		return record(cur.Live(), obj), nil
	}, opts)
	if err != nil {
		return nil, err
	}
	return kind.ScaleOf(out.Unstructured)
}

// Apply applies a configuration of the Scale (server-side apply), as
// kube-apiserver's ScaleREST and apiextensions-apiserver's scale storage
// do: the Scale's field manager applies it to the object's Scale inside
// the guaranteed update, and the replicas it asks for are written to the
// object through its strategy, with the managedFields the Scale's
// translate to. There is no create: the object must exist.
func (r scaleREST) Apply(ctx context.Context, ns, name string, config []byte, apply fieldmanager.ApplyOptions, opts WriteOptions) (runtime.Object, []string, error) {
	kind := r.s.kind
	var warnings []string
	out, err := r.s.Update(ctx, ns, name, "", func(cur *Current) (runtime.Object, error) {
		old, err := kind.ScaleOf(cur.Unstructured)
		if err != nil {
			return nil, err
		}
		sc, managed, ws, err := kind.ApplyScale(cur.Unstructured, old, config, apply)
		if err != nil {
			return nil, err
		}
		warnings = ws
		next, err := r.scaled(ctx, cur, old, sc, name)
		if err != nil {
			return nil, err
		}
		next.SetManagedFields(managed)
		return next, nil
	}, opts)
	if err != nil {
		return nil, nil, err
	}
	sc, err := kind.ScaleOf(out.Unstructured)
	return sc, warnings, err
}

// scaled is the current object asking for the replicas of sc, a Scale
// written over old: the Scale is validated, and must name the object and
// (if it says) its resourceVersion.
func (r scaleREST) scaled(ctx context.Context, cur *Current, old, sc *autoscalingv1.Scale, name string) (*unstructured.Unstructured, error) {
	kind := r.s.kind
	if err := kind.ValidateScale(ctx, sc, old); err != nil {
		return nil, err
	}
	if sc.Name != "" && sc.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Name, name))
	}
	if sc.ResourceVersion != "" && sc.ResourceVersion != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(kind.GroupResource(), name, ErrModified)
	}
	return kind.WithReplicas(cur.Unstructured, sc.Spec.Replicas)
}
