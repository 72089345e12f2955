package storage

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is the contract of a store of one resource type. namespace is ""
// for cluster-scoped resources, and for List, Watch and Count it may be "" to
// mean all namespaces.
type Interface interface {
	// Create stores a new object under its metadata.namespace and
	// metadata.name. metadata.resourceVersion is ignored and returned set to
	// the revision of the write. ErrAlreadyExists if the key exists. obj is
	// not changed; the object returned shares its content below the top
	// level and metadata with it.
	Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)

	// Get returns one object. ResourceVersion "" is a quorum read; "0" may
	// be served by the watch cache at any revision; "N" by data not older
	// than N (waiting up to TooLargeRVWait, then ErrTooLargeRV).
	Get(ctx context.Context, namespace, name string, opts GetOptions) (*unstructured.Unstructured, error)

	// List returns the objects under namespace (or all) that match the
	// selectors, following the resourceVersion table: see ListOptions.
	List(ctx context.Context, namespace string, opts ListOptions) (*unstructured.UnstructuredList, error)

	// Watch streams changes: see WatchOptions for where it starts. A start
	// before the watch cache's history (for example after compaction) is a
	// single ERROR event carrying 410 Expired, then the end of the stream.
	Watch(ctx context.Context, namespace string, opts ListOptions) (watch.Interface, error)

	// GuaranteedUpdate reads the object (quorum), checks preconditions,
	// calls tryUpdate with a private copy, and writes the result if the
	// object's modification revision is unchanged; on a lost race it reads
	// again and retries. A result equal to the current object is not written.
	GuaranteedUpdate(ctx context.Context, namespace, name string, pre *Preconditions, tryUpdate UpdateFunc) (*unstructured.Unstructured, error)

	// Delete removes an object if the preconditions hold and returns its
	// last state. ErrNotFound if absent, ErrConflict if a precondition fails.
	Delete(ctx context.Context, namespace, name string, pre *Preconditions) (*unstructured.Unstructured, error)

	// Count returns the number of objects under namespace (or all), read
	// from etcd without transferring values.
	Count(ctx context.Context, namespace string) (int64, error)
}

// UpdateFunc computes the new state of an object from its current state. It
// may change and return current (a private copy). Returning an error aborts
// the update with that error.
type UpdateFunc func(current *unstructured.Unstructured) (*unstructured.Unstructured, error)

// Preconditions must hold for an update or delete to proceed; empty fields
// are not checked. A failed precondition is ErrConflict.
type Preconditions struct {
	UID             types.UID
	ResourceVersion string
}

// GetOptions configures Get.
type GetOptions struct {
	// ResourceVersion: "" most recent (quorum), "0" any, "N" not older than N.
	ResourceVersion string
	// Shared lets a read the watch cache serves return the cached object
	// itself instead of a copy, shared with the cache and every other
	// reader: for a caller that only reads it (a GET encoding its answer)
	// and never changes it. Copying a ConfigMap was a sixth of the GET
	// handler's CPU in a profile.
	Shared bool
}

// ListOptions configures List and Watch. It carries the same fields as
// metav1.ListOptions, parsed.
type ListOptions struct {
	// ResourceVersion and ResourceVersionMatch select the revision read, as
	// the package documentation describes (after Kubernetes' "API
	// Concepts", Resource versions).
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Limit > 0 pages the list; Continue resumes a paginated list.
	Limit    int64
	Continue string
	// Label selects by labels; nil or empty selects everything.
	Label labels.Selector
	// Field selects by fields. Without Fields it may name metadata.name
	// and metadata.namespace only (others are 400 BadRequest).
	Field fields.Selector
	// Fields, when set, gives an object's selectable fields (a kind's
	// GetAttrs); Field may then name any of them, the caller having
	// checked it against the kind.
	Fields func(*unstructured.Unstructured) fields.Set

	// AllowWatchBookmarks asks a watch for BOOKMARK events.
	AllowWatchBookmarks bool
	// SendInitialEvents asks a watch for the initial state as ADDED events,
	// followed, when AllowWatchBookmarks, by a bookmark annotated
	// k8s.io/initial-events-end; it needs ResourceVersionMatch=NotOlderThan.
	SendInitialEvents *bool
	// Timeout ends a watch after this long (0: when ctx ends). A bookmark is
	// sent shortly before the end when bookmarks are allowed.
	Timeout time.Duration
}

// InitialEventsAnnotation marks the bookmark that ends a watch's initial
// events.
const InitialEventsAnnotation = metav1.InitialEventsAnnotationKey
