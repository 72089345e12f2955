package apiserver

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/registry/servicealloc"
	"github.com/stratadev/strata/storage"
)

// allocateServices gives the core services kind, if served, kube-apiserver's
// allocation of cluster IPs and node ports (package servicealloc), kept
// under the same key prefix as the objects.
func allocateServices(cfg Config) error {
	for _, k := range cfg.Kinds {
		if k.GVK.Group != "" || k.Resource != "services" {
			continue
		}
		sc := storage.Config{}
		if cfg.Storage != nil {
			cfg.Storage(&sc)
		}
		if sc.Prefix == "" {
			sc.Prefix = storage.DefaultPrefix
		}
		a, err := servicealloc.New(servicealloc.Config{Client: cfg.Client, Prefix: sc.Prefix,
			ClusterIPRange: cfg.ServiceClusterIPRange, NodePortRange: cfg.ServiceNodePortRange})
		if err != nil {
			return err
		}
		k.SetAllocator(a)
	}
	return nil
}

// deleteObject removes an object from its store and releases what it held
// (a Service's cluster IPs and node ports). Every path that removes an
// object of a built-in kind goes through it.
func (s *Server) deleteObject(ctx context.Context, res *resource, ns, name string, pre *storage.Preconditions) (*unstructured.Unstructured, error) {
	out, err := res.store.Delete(ctx, ns, name, pre)
	if err != nil {
		return out, err
	}
	if err := res.kind.Release(out); err != nil {
		s.log.Error("releasing what a deleted object held", "resource", res.kind.GroupResource().String(),
			"namespace", ns, "name", name, "err", err)
	}
	return out, nil
}

// createObject prepares and stores a new object; what the preparation
// allocated is kept only if the object is stored.
func (s *Server) createObject(ctx context.Context, c *call, obj runtime.Object, dryRun bool) (written, error) {
	ctx, alloc := registry.WithAllocation(ctx, dryRun)
	prepared, err := s.prepareCreate(ctx, c, obj)
	var out *unstructured.Unstructured
	if err == nil {
		out, err = s.storeCreate(ctx, c, prepared.Unstructured, dryRun)
	}
	alloc.Finish(err == nil)
	// The store answers a copy of what it was given, with its
	// resourceVersion.
	return written{Unstructured: out, prepared: prepared}, err
}
