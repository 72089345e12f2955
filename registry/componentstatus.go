package registry

import (
	"context"
	"crypto/tls"
	"fmt"
	"sort"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/cluster/ports"
	"k8s.io/kubernetes/pkg/probe"
	"k8s.io/kubernetes/pkg/registry/core/componentstatus"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// ComponentStatuses answers componentstatuses with kube-apiserver's REST
// (pkg/registry/core/componentstatus) over the components kube-apiserver
// probes: the controller manager and the scheduler on their default
// secure ports on 127.0.0.1 (as kube-apiserver's serversToValidate), and
// etcd, checked by the given function.
type ComponentStatuses struct {
	kind *Kind
	rest *componentstatus.REST
}

// NewComponentStatuses builds the componentstatuses REST of the kind.
func (k *Kind) NewComponentStatuses(etcdHealth func(context.Context) error) *ComponentStatuses {
	servers := func() map[string]componentstatus.Server {
		return map[string]componentstatus.Server{
			"controller-manager": &componentstatus.HttpServer{EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true},
				Addr: "127.0.0.1", Port: ports.KubeControllerManagerPort, Path: "/healthz"},
			"scheduler": &componentstatus.HttpServer{EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true},
				Addr: "127.0.0.1", Port: kubeschedulerconfig.DefaultKubeSchedulerPort, Path: "/healthz"},
			"etcd-0": etcdServer(etcdHealth),
		}
	}
	return &ComponentStatuses{kind: k, rest: componentstatus.NewStorage(servers)}
}

// etcdServer is etcd as a probed component: healthy when the check
// passes, with kube-apiserver's "ok".
type etcdServer func(context.Context) error

// DoServerCheck implements componentstatus.Server.
func (check etcdServer) DoServerCheck() (probe.Result, string, error) {
	if err := check(context.Background()); err != nil {
		return probe.Failure, "", err
	}
	return probe.Success, "ok", nil
}

// Get is the status of one component (404 for an unknown one).
func (c *ComponentStatuses) Get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	obj, err := c.rest.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return c.kind.stored(obj.(*api.ComponentStatus))
}

// List is the status of every component the selectors match, by name
// (kube-apiserver lists them in no particular order).
func (c *ComponentStatuses) List(ctx context.Context, label labels.Selector, field fields.Selector) (*unstructured.UnstructuredList, error) {
	obj, err := c.rest.List(ctx, &metainternalversion.ListOptions{LabelSelector: label, FieldSelector: field})
	if err != nil {
		return nil, err
	}
	items := obj.(*api.ComponentStatusList).Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(c.kind.ListGVK())
	for i := range items {
		u, err := c.kind.stored(&items[i])
		if err != nil {
			return nil, fmt.Errorf("registry: component status %s: %w", items[i].Name, err)
		}
		list.Items = append(list.Items, *u)
	}
	return list, nil
}
