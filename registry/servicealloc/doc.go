// Package servicealloc gives Services their cluster IPs and node ports as
// kube-apiserver does: from --service-cluster-ip-range and
// --service-node-port-range, with the requested values honoured (and
// kube-apiserver's errors when they are taken or out of range), released
// on delete and on type changes.
//
// The decisions are upstream's: the hooks of the service REST
// (k8s.io/kubernetes/pkg/registry/core/service/storage: BeginCreate,
// BeginUpdate, AfterDelete, and alloc.go behind them) run on every write,
// over upstream's bitmap allocators (ipallocator.Range,
// portallocator.PortAllocator, allocator.AllocationBitmap). Only where the
// bitmaps live is strata's: a RangeAllocation under one etcd key each
// ({prefix}/ranges/serviceips, {prefix}/ranges/servicenodeports, as
// kube-apiserver keeps them), changed by compare-and-swap so that
// replicas sharing an etcd never hand out one address or port twice, and
// read back after a restart.
//
// Why bitmaps and not IPAddress objects: kube-apiserver v1.37 records each
// cluster IP as a networking.k8s.io/v1 IPAddress (the
// MultiCIDRServiceAllocator), but its allocator works through a client and
// informers of IPAddresses and ServiceCIDRs, whose readiness a controller
// sets, and node ports need the bitmap anyway. The bitmap path is upstream
// code end to end and one mechanism for both, including upstream's repair
// controllers (Registries; run by package bootstrap), which rebuild the
// bitmaps from the Services; the cost is that no IPAddress objects appear.
package servicealloc
