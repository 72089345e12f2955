package bench

import (
	"context"
	"slices"

	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/bench/floor"
	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
)

// The scenarios: every cell the bench runs, as pairs of operations measured
// in alternating rounds, in the order they run. The report's ratios
// between them are in ratios.go; bench/README.md describes each cell.
//
//	pair                 compared with                  floors (bench/floor)
//	get                  etcd get                       get-floor, get-floor-read
//	get-rv0              etcd get-serializable
//	list                 etcd range                     list-floor, list-floor-read
//	list-rv0             etcd range-serializable
//	get-protobuf         get-json (strata itself)
//	list-protobuf        list-json (strata itself)      list-protobuf-floor, list-json-floor
//	get-rbac             get-masters (the admin)
//	create-rbac          create-masters (the admin)
//	create               etcd put                       create-floor, create-floor-fm
//	patch, update,       etcd read+cas                  patch-floor, update-floor, apply-floor
//	  apply, apply-2
//	create-admission     create-admission-off (strata only)
//	create-vap           create-vap-off (strata only)
//	watch                etcd watch                     the floor's watch
//
// Each server selected (strata, kube-apiserver) runs every pair but the
// admission ones; the watch cells run last (watch.go).

// The sides of the report: the API servers, raw etcd and the floor server.
const (
	sideStrata = "strata"
	sideKube   = "kube"
	sideEtcd   = "etcd"
	sideFloor  = "floor"
)

// Operation names, as the report shows them.
const (
	opGet      = "get"
	opGetRV0   = "get-rv0"
	opGetSer   = "get-serializable"
	opUpdate   = "update"
	opList     = "list"
	opListRV0  = "list-rv0"
	opCreate   = "create"
	opPatch    = "patch"
	opApply    = "apply"
	opApply2   = "apply-2"
	opWatch    = "watch"
	opRange    = "range"
	opRangeSer = "range-serializable"
	opPut      = "put"
	opReadCAS  = "read+cas"
)

// Operation names of the protobuf cells.
const (
	opGetProtobuf  = "get-protobuf"
	opGetJSON      = "get-json"
	opListProtobuf = "list-protobuf"
	opListJSON     = "list-json"
)

// Operation names of the RBAC cells.
const (
	opGetRBAC       = "get-rbac"
	opGetMasters    = "get-masters"
	opCreateRBAC    = "create-rbac"
	opCreateMasters = "create-masters"
)

// Operation names of the admission cells.
const (
	opCreateAdmission    = "create-admission"
	opCreateAdmissionOff = "create-admission-off"
	opCreateVAP          = "create-vap"
	opCreateVAPOff       = "create-vap-off"
)

// Operation names of the floor's cells (bench/floor), each the floor of
// the server operation the ratios pair it with (ratios.go).
const (
	opCreateFloor       = "create-floor"
	opCreateFMFloor     = "create-floor-fm"
	opGetFloor          = "get-floor"
	opGetReadFloor      = "get-floor-read"
	opListFloor         = "list-floor"
	opListReadFloor     = "list-floor-read"
	opListProtobufFloor = "list-protobuf-floor"
	opListJSONFloor     = "list-json-floor"
	opPatchFloor        = "patch-floor"
	opUpdateFloor       = "update-floor"
	opApplyFloor        = "apply-floor"
)

// op is one measured operation of one side (strata or etcd).
type op struct {
	side, name string
	// pid is the server process whose CPU time the cells read (0: none);
	// pidOf, when set, says it once the preparation has started the
	// server.
	pid   int
	pidOf func() int
	// prepare, when set, runs once before the operation's first cell.
	prepare func(context.Context) error
	run     func(context.Context, cell.Call) error
}

// serverPID is the process whose CPU time the operation's cells read.
func (o op) serverPID() int {
	if o.pidOf != nil {
		return o.pidOf()
	}
	return o.pid
}

// pair is a strata operation and the raw etcd operation it is compared
// to, with, for create, the floor: the same client and etcd operation
// through a server that does nothing else (bench/floor).
type pair struct {
	strata, etcd op
	// more are further strata operations compared with the same etcd
	// operation (server-side apply beside strategic PATCH).
	more []op
	// floors are the floor's operations beside them.
	floors []op
}

// ops are the pair's operations in the order each round runs them.
func (p pair) ops() []op {
	ops := append([]op{p.strata, p.etcd}, p.more...)
	return append(ops, p.floors...)
}

// pairs are the compared operations, in the order they run: each
// target's operations (pairsFor) merged, the first target's in the pair's
// strata slot, the others' appended to more. Creates and patches come
// after the lists and the protobuf cells (which list too), so that the
// listed namespace holds exactly Config.Objects ConfigMaps while it is
// listed.
func (r *runner) pairs() []pair {
	var out []pair
	for i, t := range r.env.targets() {
		ps := r.pairsFor(t)
		if i == 0 {
			out = ps
			continue
		}
		for j := range out {
			out[j].more = append(out[j].more, ps[j].serverOps(t.side)...)
		}
	}
	if r.env.strata != nil {
		// strata against itself with admission off: strata only.
		out = append(out, r.admissionPairs()...)
	}
	return out
}

// pairsFor are the pairs with t's operations in the strata slot.
func (r *runner) pairsFor(t *target) []pair {
	s := func(name string, run func(context.Context, cell.Call) error) op {
		return op{side: t.side, name: name, pid: t.pid, run: run}
	}
	lists := []pair{
		{strata: s(opGet, r.get(t, "")), etcd: op{side: sideEtcd, name: opGet, run: r.rawGet(false)},
			floors: []op{r.floorOp(opGetFloor, r.get(r.floorT, "")), r.floorOp(opGetReadFloor, r.getIn(r.floorT, floor.ReadNamespace, ""))}},
		{strata: s(opGetRV0, r.get(t, "0")), etcd: op{side: sideEtcd, name: opGetSer, run: r.rawGet(true)}},
		{strata: s(opList, r.list(t, "")), etcd: op{side: sideEtcd, name: opRange, run: r.rawRange(false)},
			floors: []op{r.floorOp(opListFloor, r.list(r.floorT, "")), r.floorOp(opListReadFloor, r.listIn(r.floorT, floor.ReadNamespace, ""))}},
		{strata: s(opListRV0, r.list(t, "0")), etcd: op{side: sideEtcd, name: opRangeSer, run: r.rawRange(true)}},
	}
	patch, update, apply, apply2 := s(opPatch, r.patch(t)), s(opUpdate, r.update(t)), s(opApply, r.applyAs(t, 1)), s(opApply2, r.applyAs(t, 2))
	patch.prepare, update.prepare, apply.prepare = r.preparePatch(t), r.prepareUpdate(t), r.prepareApply(t)
	patchFloor, updateFloor := r.floorOp(opPatchFloor, r.patch(r.floorT)), r.floorOp(opUpdateFloor, r.update(r.floorT))
	applyFloor := r.floorOp(opApplyFloor, r.applyAs(r.floorT, 1))
	patchFloor.prepare, updateFloor.prepare, applyFloor.prepare = r.prepareWriteFloor, r.prepareWriteFloor, r.prepareApplyFloor
	writes := []pair{
		{strata: s(opCreate, r.create(t)), etcd: op{side: sideEtcd, name: opPut, run: r.rawPut},
			floors: []op{r.floorOp(opCreateFloor, r.create(r.floorT)), r.floorOp(opCreateFMFloor,
				r.createIn(func() kubernetes.Interface { return r.floorT.cs }, floor.FMNamespace, "fm"))}},
		{strata: patch, etcd: op{side: sideEtcd, name: opReadCAS, prepare: r.prepareCAS, run: r.rawCAS},
			more: []op{update, apply, apply2}, floors: []op{patchFloor, updateFloor, applyFloor}},
	}
	return slices.Concat(lists, r.protobufPairs(t), r.rbacPairs(t), writes)
}

// serverOps are the pair's operations of side.
func (p pair) serverOps(side string) []op {
	var ops []op
	for _, o := range append([]op{p.strata, p.etcd}, p.more...) {
		if o.side == side {
			ops = append(ops, o)
		}
	}
	return ops
}

// protobufPairs are t's protobuf cells, each beside its JSON cell.
func (r *runner) protobufPairs(t *target) []pair {
	s := func(name string, run func(context.Context, cell.Call) error) op {
		return op{side: t.side, name: name, pid: t.pid, run: run}
	}
	return []pair{
		{strata: s(opGetProtobuf, r.typedGet(t.protobuf)), etcd: s(opGetJSON, r.typedGet(t.json))},
		{strata: s(opListProtobuf, r.typedList(t, protobufClient)), etcd: s(opListJSON, r.typedList(t, jsonClient)),
			floors: []op{r.floorOp(opListProtobufFloor, r.typedList(r.floorT, protobufClient)),
				r.floorOp(opListJSONFloor, r.typedList(r.floorT, jsonClient))}},
	}
}

// rbacPairs are t's RBAC cells, each beside the admin's.
func (r *runner) rbacPairs(t *target) []pair {
	s := func(name string, run func(context.Context, cell.Call) error) op {
		return op{side: t.side, name: name, pid: t.pid, run: run}
	}
	getRBAC, createRBAC := s(opGetRBAC, r.typedGet(t.user)), s(opCreateRBAC, r.createAs(t.user, "rbac"))
	getRBAC.prepare, createRBAC.prepare = r.prepareRBAC(t), r.prepareRBAC(t)
	return []pair{
		{strata: getRBAC, etcd: s(opGetMasters, r.typedGet(t.cs))},
		{strata: createRBAC, etcd: s(opCreateMasters, r.createAs(t.cs, "masters"))},
	}
}

// admissionPairs are the admission cells: creates through a server with
// the default chain beside the same through one with admission off. Both
// are servers of their own on strata's etcd, started by the cells'
// preparation: the main server leads the controllers (the garbage
// collector and quota controller follow every create), so measured
// against it the chain would be charged their work too.
func (r *runner) admissionPairs() []pair {
	srv := func(off bool, name, ns, who string) op {
		t := func() *target { return r.env.admissionOn }
		if off {
			t = func() *target { return r.env.admissionOff }
		}
		return op{side: sideStrata, name: name, prepare: r.prepareAdmissionServers,
			run:   r.createIn(func() kubernetes.Interface { return t().cs }, ns, who),
			pidOf: func() int { return t().pid }}
	}
	on := func(name, ns, who string) op { return srv(false, name, ns, who) }
	off := func(name, who string) op { return srv(true, name, layout.Namespace, who) }
	vap := on(opCreateVAP, vapNamespace, "vap")
	vap.prepare = func(ctx context.Context) error {
		if err := r.prepareAdmissionServers(ctx); err != nil {
			return err
		}
		return r.createPolicy(ctx, r.env.admissionOn.cs)
	}
	return []pair{
		{strata: on(opCreateAdmission, layout.Namespace, "adm"), etcd: off(opCreateAdmissionOff, "off")},
		{strata: vap, etcd: off(opCreateVAPOff, "vapoff")},
	}
}
