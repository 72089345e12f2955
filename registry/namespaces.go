package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stratadev/strata/storage"
)

// DefaultNamespaces exist from the first start, as in a new cluster.
var DefaultNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// immortalNamespaces may not be deleted, as kube-apiserver's
// NamespaceLifecycle admission plugin keeps them.
var immortalNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// Namespaces keeps one server's namespace rules: the NamespaceLifecycle
// admission kube-apiserver runs (no new objects in a namespace that does
// not exist or is terminating; the default namespaces stay), and the
// emptying of a deleted namespace, which kube-controller-manager's
// namespace controller does there. The namespaces' own store registers
// with it (NewStore).
type Namespaces struct {
	// admit turns the admission rules on.
	admit bool
	// stores lists every store served now, to empty a namespace.
	stores func() []*Store
	store  atomic.Pointer[Store]
	ctx    context.Context
	log    *slog.Logger
}

// NewNamespaces keeps the namespace rules; admit turns on the admission
// ones (--disable-admission-plugins=NamespaceLifecycle turns them off).
// Namespaces are emptied in the background until ctx ends.
func NewNamespaces(ctx context.Context, admit bool, stores func() []*Store, log *slog.Logger) *Namespaces {
	return &Namespaces{admit: admit, stores: stores, ctx: ctx, log: log}
}

func (n *Namespaces) own(s *Store) { n.store.Store(s) }

// checkDeletable refuses the deletion of an immortal namespace with the
// admission plugin's 403.
func (n *Namespaces) checkDeletable(name string) error {
	if n != nil && n.admit && slices.Contains(immortalNamespaces, name) {
		return apierrors.NewForbidden(namespaceResource, name, errors.New("this namespace may not be deleted"))
	}
	return nil
}

var namespaceResource = core.WithResource("namespaces").GroupResource()

// checkWritable refuses a create in a namespace that does not exist (404,
// as kube-apiserver's NamespaceLifecycle admission answers) or is being
// deleted (403), naming k's object name. The watch cache answers first; a
// miss is checked with a quorum read, since the namespace may have just
// been created.
func (n *Namespaces) checkWritable(ctx context.Context, ns string, k *Kind, name string) error {
	if n == nil || !n.admit {
		return nil
	}
	st := n.store.Load()
	if st == nil {
		return apierrors.NewInternalError(errors.New("the namespaces kind is not served"))
	}
	// Only read: the cache's own object, not a copy.
	nsObj, err := st.storage.Get(ctx, "", ns, storage.GetOptions{ResourceVersion: "0", Shared: true})
	if errors.Is(err, storage.ErrNotFound) {
		nsObj, err = st.storage.Get(ctx, "", ns, storage.GetOptions{})
	}
	if err != nil {
		return err
	}
	if nsObj.GetDeletionTimestamp() == nil {
		return nil
	}
	forbidden := apierrors.NewForbidden(k.GroupResource(), name, fmt.Errorf(
		"unable to create new content in namespace %s because it is being terminated", ns))
	forbidden.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: "NamespaceTerminating", Field: "metadata.namespace",
		Message: fmt.Sprintf("namespace %s is being terminated", ns)}}
	return forbidden
}

// Ensure creates the default namespaces that do not exist yet, through
// the namespace kind's own create preparation, and resumes the deletion of
// namespaces an earlier run left Terminating.
func (n *Namespaces) Ensure(ctx context.Context) error {
	st := n.store.Load()
	if st == nil {
		return errors.New("registry: the namespaces kind is required")
	}
	// All at once: a first start's creates share etcd's fsyncs.
	errs := make([]error, len(DefaultNamespaces))
	var wg sync.WaitGroup
	for i, name := range DefaultNamespaces {
		wg.Go(func() { errs[i] = st.ensure(ctx, name) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	list, err := st.storage.List(ctx, "", storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("registry: listing namespaces: %w", err)
	}
	for i := range list.Items {
		if list.Items[i].GetDeletionTimestamp() != nil {
			n.finalizeLater(list.Items[i].GetName())
		}
	}
	return nil
}

// ensure creates the namespace name unless it exists.
func (s *Store) ensure(ctx context.Context, name string) error {
	_, err := s.storage.Get(ctx, "", name, storage.GetOptions{})
	if err == nil {
		return nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("registry: reading namespace %s: %w", name, err)
	}
	obj, _, err := s.kind.Decode(fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name), "")
	if err != nil {
		return fmt.Errorf("registry: namespace %s: %w", name, err)
	}
	u, err := s.kind.PrepareCreate(s.kind.Context(ctx, "", "create", "", nil), obj, nil)
	if err != nil {
		return fmt.Errorf("registry: namespace %s: %w", name, err)
	}
	if _, err := s.storage.Create(ctx, u.Unstructured); err != nil && !errors.Is(err, storage.ErrAlreadyExists) {
		return fmt.Errorf("registry: creating namespace %s: %w", name, err)
	}
	return nil
}

// finalizeLater empties a Terminating namespace in the background and
// then removes it, as kube-controller-manager's namespace controller
// does. Objects held by finalizers keep the namespace until they go.
func (n *Namespaces) finalizeLater(name string) {
	if n == nil {
		return
	}
	go func() {
		for {
			remaining, err := n.empty(n.ctx, name)
			if err == nil && remaining == 0 {
				err = n.remove(n.ctx, name)
			}
			if err == nil && remaining == 0 {
				return
			}
			if err != nil {
				n.log.Warn("namespace deletion", "namespace", name, "err", err)
			}
			select {
			case <-n.ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
}

// empty deletes every object in the namespace and says how many remain
// (held by finalizers).
func (n *Namespaces) empty(ctx context.Context, ns string) (int, error) {
	remaining := 0
	for _, st := range n.stores() {
		if !st.kind.Namespaced || st.storage == nil {
			continue
		}
		held, err := st.emptyNamespace(ctx, ns)
		if err != nil {
			return 0, err
		}
		remaining += held
	}
	return remaining, nil
}

// emptyNamespace deletes the store's objects in ns, marking those
// finalizers hold, and counts those.
func (s *Store) emptyNamespace(ctx context.Context, ns string) (int, error) {
	list, err := s.storage.List(ctx, ns, storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	held := 0
	for i := range list.Items {
		item := &list.Items[i]
		if len(item.GetFinalizers()) > 0 {
			held++
			if item.GetDeletionTimestamp() == nil {
				_, err = s.storage.GuaranteedUpdate(ctx, ns, item.GetName(), nil, markForDeletion)
			}
		} else {
			_, err = s.remove(ctx, ns, item.GetName(), nil)
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
			return 0, err
		}
	}
	return held, nil
}

func markForDeletion(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	cur.SetDeletionTimestamp(&now)
	zero := int64(0)
	cur.SetDeletionGracePeriodSeconds(&zero)
	return cur, nil
}

// remove drops the "kubernetes" finalizer of an emptied namespace and
// deletes it unless other finalizers hold it.
func (n *Namespaces) remove(ctx context.Context, name string) error {
	st := n.store.Load()
	out, err := st.storage.GuaranteedUpdate(ctx, "", name, nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		unstructured.RemoveNestedField(cur.Object, "spec", "finalizers")
		return cur, nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(out.GetFinalizers()) > 0 {
		return nil
	}
	_, err = st.storage.Delete(ctx, "", name, &storage.Preconditions{UID: out.GetUID()})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// Served says whether the namespaces kind is served: the rules need it.
func (n *Namespaces) Served() bool { return n.store.Load() != nil }
