package bench

// The floor's cells: the client side of the floor server (bench/floor),
// which the runner starts once it knows the bytes strata stores, and the
// floor's preparations.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/bench/floor"
	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// floorServer is the floor server, its client, and its process (nil when
// it runs in this process, under -in-process).
type floorServer struct {
	srv  *httptest.Server // in this process only
	proc *proc.Process
	cfg  *rest.Config
}

// startFloor starts the floor server: in this process when inProcess is
// set, else as a child process with an etcd client of its own.
func (e *env) startFloor(ctx context.Context, inProcess bool, value string) (*floorServer, error) {
	f := &floorServer{}
	url := ""
	if inProcess {
		srv, err := floor.Serve(e.raw, value)
		if err != nil {
			return nil, err
		}
		f.srv, url = srv, srv.URL
	} else {
		spec := servers.Spec{Mode: servers.ModeFloor, EtcdServers: e.etcd.Endpoints, Value: value}
		p, words, err := servers.StartChild(ctx, spec, filepath.Join(e.tmp, "floor.log"))
		if err != nil {
			return nil, err
		}
		f.proc, url = p, words
	}
	// newTarget makes its clients (prepareFloor).
	f.cfg = &rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	return f, nil
}

// pid is the floor's process (0: this one, not measured).
func (f *floorServer) pid() int {
	if f == nil {
		return 0
	}
	return f.proc.Pid() // 0 for a nil process
}

func (f *floorServer) close() error {
	switch {
	case f == nil:
	case f.srv != nil:
		f.srv.Close()
	default:
		return f.proc.Stop()
	}
	return nil
}

// prepareFloor starts the floor server (once the stored bytes are known),
// for whichever of its cells runs first.
func (r *runner) prepareFloor(ctx context.Context) error {
	if r.env.floor != nil {
		return nil
	}
	f, err := r.env.startFloor(ctx, r.cfg.InProcess, r.value)
	if err != nil {
		return err
	}
	r.env.floor = f
	t, err := newTarget(sideFloor, f.cfg, f.pid())
	if err != nil {
		return err
	}
	// The floor lists what the raw range reads (bench/floor).
	t.listItems = r.rawItems
	*r.floorT = *t
	return nil
}

// floorOp is the floor's op name, run by run.
func (r *runner) floorOp(name string, run func(context.Context, cell.Call) error) op {
	return op{side: sideFloor, name: name, prepare: r.prepareFloor, run: run,
		pidOf: func() int { return r.env.floor.pid() }}
}

// prepareWriteFloor starts the floor and puts one ConfigMap per client of
// the largest cell, under the names the patch and update cells write.
func (r *runner) prepareWriteFloor(ctx context.Context) error {
	if err := r.prepareFloor(ctx); err != nil {
		return err
	}
	n := slices.Max(r.cfg.Concurrency)
	updated := make([]*corev1.ConfigMap, n)
	err := cell.Parallel(ctx, n, 16, func(ctx context.Context, w int) error {
		for _, name := range []string{patchName(w), updateName(w)} {
			cm := r.configMap(name)
			cm.Namespace = layout.Namespace
			data, err := json.Marshal(cm)
			if err == nil {
				_, err = r.env.raw.Put(ctx, floor.ConfigMapKey(name), string(data))
			}
			if err != nil {
				return err
			}
			updated[w] = cm // the update cell's, the last one put
		}
		return nil
	})
	// The update cell PUTs each client's ConfigMap as it last wrote it.
	r.floorT.updated = updated
	return err
}

// prepareApplyFloor starts the floor and creates one Deployment per
// client of the largest cell through it, as prepareApply does on a server.
func (r *runner) prepareApplyFloor(ctx context.Context) error {
	if err := r.prepareFloor(ctx); err != nil {
		return err
	}
	return r.prepareApply(r.floorT)(ctx)
}

// floorWatch is the watch cell against the floor server.
func (r *runner) floorWatch(ctx context.Context) (report.Row, error) {
	if err := r.prepareFloor(ctx); err != nil {
		return report.Row{}, err
	}
	return r.serverWatch(ctx, r.floorT)
}
