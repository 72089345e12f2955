package apiserver

import (
	"github.com/stratadev/strata/registry/servicealloc"
	"github.com/stratadev/strata/storage"
)

// allocateServices gives the kinds whose objects hold cluster IPs and node
// ports (Services) kube-apiserver's allocation of them (package
// servicealloc), kept under the same key prefix as the objects.
func allocateServices(cfg Config) error {
	for _, k := range cfg.Kinds {
		if !k.AllocatesServiceAddresses() {
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
