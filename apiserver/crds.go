package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// crdController serves the resources of CustomResourceDefinitions, as
// kube-apiserver's apiextensions controllers do: it follows the stored
// CRDs (a list, then a watch), accepts their names, installs their kinds
// and then marks them Established, and on deletion removes every custom
// resource before it lets the CRD go. Every replica runs one; their
// status writes agree, so racing replicas only retry.
type crdController struct {
	s    *Server
	crds *resource

	syncOnce sync.Once
	synced   chan struct{} // closed after the first list is installed
	done     chan struct{} // closed when run returns

	// installed maps a CRD name to what is served for it; only run's
	// goroutine touches it.
	installed map[string]*installedCRD
}

// installedCRD is what a CRD currently serves.
type installedCRD struct {
	fingerprint string // spec and accepted names the kinds were built from
	gvrs        []schema.GroupVersionResource
}

func newCRDController(s *Server, crds *resource) *crdController {
	return &crdController{s: s, crds: crds, synced: make(chan struct{}), done: make(chan struct{}),
		installed: map[string]*installedCRD{}}
}

// waitSynced blocks until the CRDs stored at start are served.
func (c *crdController) waitSynced(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("custom resource definitions not yet served: %w", ctx.Err())
	}
}

// wait blocks until run has returned (after the server's context ended).
func (c *crdController) wait() { <-c.done }

// run lists and watches CRDs until ctx ends, listing again whenever the
// watch ends.
func (c *crdController) run(ctx context.Context) {
	defer close(c.done)
	for ctx.Err() == nil {
		if err := c.listAndWatch(ctx); err != nil && ctx.Err() == nil {
			c.s.log.Warn("following CustomResourceDefinitions", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (c *crdController) listAndWatch(ctx context.Context) error {
	list, err := c.crds.store.Storage().List(ctx, "", storage.ListOptions{})
	if err != nil {
		return err
	}
	present := map[string]bool{}
	for i := range list.Items {
		present[list.Items[i].GetName()] = true
		c.sync(ctx, &list.Items[i])
	}
	for name := range c.installed {
		if !present[name] {
			c.uninstall(name)
		}
	}
	c.syncOnce.Do(func() { close(c.synced) })
	w, err := c.crds.store.Storage().Watch(ctx, "", storage.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		u, _ := ev.Object.(*unstructured.Unstructured)
		switch ev.Type {
		case watch.Added, watch.Modified:
			if u != nil {
				c.sync(ctx, u)
			}
		case watch.Deleted:
			if u != nil {
				c.uninstall(u.GetName())
			}
		case watch.Error:
			return nil // list again
		}
	}
	return nil
}

// sync brings what is served for one CRD in line with it; failures are
// logged and retried on the next event or relist.
func (c *crdController) sync(ctx context.Context, u *unstructured.Unstructured) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		c.s.log.Error("reading a stored CustomResourceDefinition", "name", u.GetName(), "err", err)
		return
	}
	var err error
	if crd.DeletionTimestamp != nil {
		err = c.finalize(ctx, crd, u.Object)
	} else {
		err = c.establish(ctx, crd, u.Object)
	}
	if err != nil && ctx.Err() == nil {
		c.s.log.Error("serving a CustomResourceDefinition", "name", crd.Name, "err", err)
	}
}

// establish accepts the CRD's names, serves its kinds, then records
// NamesAccepted and Established in its status, so that a client that sees
// Established finds the resources served.
func (c *crdController) establish(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, raw map[string]any) error {
	conflict := c.nameConflict(crd)
	want := crd.DeepCopy()
	if conflict == "" {
		want.Status.AcceptedNames = crd.Spec.Names
		apihelpers.SetCRDCondition(want, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue,
			Reason: "NoConflicts", Message: "no conflicts found"})
		apihelpers.SetCRDCondition(want, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
			Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"})
		if err := c.install(want, raw, false); err != nil {
			return err
		}
	} else {
		apihelpers.SetCRDCondition(want, apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionFalse,
			Reason: conflict + "Conflict", Message: fmt.Sprintf("%s is already in use", conflictValue(crd, conflict))})
		if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			apihelpers.SetCRDCondition(want, apiextensionsv1.CustomResourceDefinitionCondition{
				Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
				Reason: "NotAccepted", Message: "not all names are accepted"})
		}
	}
	return c.writeStatus(ctx, crd, want.Status)
}

// nameConflict says which name of crd another served CRD of its group
// already uses ("Plural", "Kind", "ShortNames"), or "".
func (c *crdController) nameConflict(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, r := range c.s.current().byGroup[crd.Spec.Group] {
		other := r.kind.CRD()
		if other == nil || other.Name == crd.Name {
			continue
		}
		switch {
		case r.kind.Resource == crd.Spec.Names.Plural:
			return "Plural"
		case r.kind.GVK.Kind == crd.Spec.Names.Kind:
			return "Kind"
		}
		for _, sn := range crd.Spec.Names.ShortNames {
			if slices.Contains(r.kind.ShortNames, sn) {
				return "ShortNames"
			}
		}
	}
	if r, ok := c.s.current().byGroup[crd.Spec.Group]; ok && len(r) > 0 && r[0].kind.CRD() == nil {
		return "Plural" // a built-in group
	}
	return ""
}

func conflictValue(crd *apiextensionsv1.CustomResourceDefinition, what string) string {
	switch what {
	case "Kind":
		return fmt.Sprintf("%q", crd.Spec.Names.Kind)
	case "ShortNames":
		return fmt.Sprintf("%q", crd.Spec.Names.ShortNames)
	}
	return fmt.Sprintf("%q", crd.Spec.Names.Plural)
}

// writeStatus stores status unless the CRD already has it. Condition
// timestamps are kept when only they would change.
func (c *crdController) writeStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.CustomResourceDefinitionStatus) error {
	if statusEqual(crd.Status, status) {
		return nil
	}
	_, err := c.crds.store.Storage().GuaranteedUpdate(ctx, "", crd.Name, &storage.Preconditions{UID: crd.UID},
		func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
			if err != nil {
				return nil, err
			}
			cur.Object["status"] = content
			return cur, nil
		})
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
		return nil // deleted or replaced meanwhile: its own event follows
	}
	return err
}

func statusEqual(a, b apiextensionsv1.CustomResourceDefinitionStatus) bool {
	strip := func(s apiextensionsv1.CustomResourceDefinitionStatus) apiextensionsv1.CustomResourceDefinitionStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		return s
	}
	return apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

// install serves the kinds of crd (replacing what it served before),
// reusing the stores of resources whose storage is unchanged, and
// publishes their OpenAPI schemas.
func (c *crdController) install(crd *apiextensionsv1.CustomResourceDefinition, raw map[string]any, terminating bool) error {
	fp, err := fingerprint(crd, raw, terminating)
	if err != nil {
		return err
	}
	old := c.installed[crd.Name]
	if old != nil && old.fingerprint == fp {
		return nil
	}
	kinds, err := registry.CustomKinds(crd, raw, c.s.converters)
	if err != nil {
		return err
	}
	slices.SortStableFunc(kinds, func(a, b *registry.Kind) int {
		return -version.CompareKubeAwareVersionStrings(a.GVK.Version, b.GVK.Version)
	})
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	cur := c.s.current()
	next := cur.clone()
	retired := retire(cur, next, old)
	entry := &installedCRD{fingerprint: fp}
	var started []*resource
	for _, k := range kinds {
		r := reusable(retired, k)
		if r == nil {
			if r, err = c.s.newResource(k); err != nil {
				for _, s := range started {
					s.store.Storage().Close()
				}
				return err
			}
			started = append(started, r)
		}
		r = &resource{kind: k, store: r.store.Serving(k, terminating), items: r.items, events: r.events}
		next.add(r)
		entry.gvrs = append(entry.gvrs, k.GroupVersionResource())
	}
	c.s.served.Store(next)
	c.installed[crd.Name] = entry
	closeUnused(retired, next)
	c.publishOpenAPI(next, entry, old)
	return nil
}

// retire removes what old served (nil: nothing) from next and returns
// those resources as cur serves them.
func retire(cur, next *served, old *installedCRD) []*resource {
	if old == nil {
		return nil
	}
	var retired []*resource
	for _, gvr := range old.gvrs {
		if r, ok := cur.lookup(gvr); ok {
			retired = append(retired, r)
		}
		next.remove(gvr)
	}
	return retired
}

// reusable finds a retired resource whose store serves k unchanged.
func reusable(retired []*resource, k *registry.Kind) *resource {
	for _, r := range retired {
		if r.kind.ReadsLike(k) {
			return r
		}
	}
	return nil
}

// closeUnused stops the stores of retired resources no longer served.
func closeUnused(retired []*resource, next *served) {
	for _, r := range retired {
		inUse := false
		for _, n := range next.resources {
			if n.store.Storage() == r.store.Storage() {
				inUse = true
				break
			}
		}
		if !inUse {
			r.store.Storage().Close()
		}
	}
}

// fingerprint identifies what the kinds of a CRD are built from: the
// stored spec (with the schemas' patch extensions), the accepted names.
func fingerprint(crd *apiextensionsv1.CustomResourceDefinition, raw map[string]any, terminating bool) (string, error) {
	data, err := json.Marshal(struct {
		Spec        any
		Names       apiextensionsv1.CustomResourceDefinitionNames
		Terminating bool
	}{raw["spec"], crd.Status.AcceptedNames, terminating})
	if err != nil {
		return "", fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	return string(data), nil
}

// uninstall stops serving a CRD's kinds.
func (c *crdController) uninstall(name string) {
	old := c.installed[name]
	if old == nil {
		return
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	cur := c.s.current()
	next := cur.clone()
	retired := retire(cur, next, old)
	c.s.served.Store(next)
	delete(c.installed, name)
	closeUnused(retired, next)
	c.publishOpenAPI(next, nil, old)
}

// finalize runs when a CRD is being deleted: its resources refuse new
// objects (terminating), every custom resource is deleted, and then the
// cleanup finalizer is removed, which lets the CRD go.
func (c *crdController) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, raw map[string]any) error {
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		if len(crd.Finalizers) == 0 {
			_, err := c.crds.store.Storage().Delete(ctx, "", crd.Name, &storage.Preconditions{UID: crd.UID})
			if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
				return nil
			}
			return err
		}
		return nil
	}
	if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		if err := c.install(crd, raw, true); err != nil {
			return err
		}
		if err := c.deleteInstances(ctx, crd); err != nil {
			return err
		}
	}
	c.uninstall(crd.Name)
	out, err := c.crds.store.Storage().GuaranteedUpdate(ctx, "", crd.Name, &storage.Preconditions{UID: crd.UID},
		func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			finalizers := slices.DeleteFunc(cur.GetFinalizers(), func(f string) bool {
				return f == apiextensionsv1.CustomResourceCleanupFinalizer
			})
			cur.SetFinalizers(finalizers)
			return cur, nil
		})
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(out.GetFinalizers()) == 0 {
		_, err = c.crds.store.Storage().Delete(ctx, "", crd.Name, &storage.Preconditions{UID: crd.UID})
		if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
			return nil
		}
	}
	return err
}

// deleteInstances deletes every custom resource of crd. Instances held by
// finalizers go too: kube-apiserver would wait for their controllers to
// remove them, and strata runs none.
func (c *crdController) deleteInstances(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	entry := c.installed[crd.Name]
	if entry == nil || len(entry.gvrs) == 0 {
		return nil
	}
	r, ok := c.s.current().lookup(entry.gvrs[0])
	if !ok {
		return nil
	}
	list, err := r.store.Storage().List(ctx, "", storage.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		item := &list.Items[i]
		if _, err := r.store.Storage().Delete(ctx, item.GetNamespace(), item.GetName(), nil); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
	}
	return nil
}
