package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/report"
)

const (
	// watchWarmupEvents are written, and delivered to every watcher,
	// before the measured ones: the first also proves every watch started.
	watchWarmupEvents = 3
	// eventTimeout bounds the wait for one write to reach every watcher;
	// past it the cell stops and counts the missing deliveries as errors.
	eventTimeout = 10 * time.Second
)

// fanout measures the delivery of numbered writes to n watchers. Each write
// is issued after the previous one reached every watcher; a delivery's
// latency runs from just before its write was issued to its receipt,
// decoded, by the watcher.
type fanout struct {
	n       int
	base    time.Time
	sent    []atomic.Int64 // per write: when it was issued, since base
	got     []atomic.Int32 // per write: how many watchers received it
	done    []chan struct{}
	lat     [][]time.Duration // per watcher: its measured deliveries
	writes  []time.Duration   // the measured writes' own latencies
	stopped atomic.Bool
	// pid is the server process whose CPU time the measured writes'
	// deliveries cost (0: not measured), and cpu that time.
	pid int
	cpu *time.Duration

	mu     sync.Mutex
	errors int
	first  error
}

func newFanout(watchers, events int) *fanout {
	total := watchWarmupEvents + events
	f := &fanout{n: watchers, base: time.Now(), sent: make([]atomic.Int64, total),
		got: make([]atomic.Int32, total), done: make([]chan struct{}, total), lat: make([][]time.Duration, watchers)}
	for i := range f.done {
		f.done[i] = make(chan struct{})
	}
	return f
}

// deliver records that watcher w received write seq.
func (f *fanout) deliver(w, seq int) {
	now := time.Since(f.base)
	if seq < 0 || seq >= len(f.sent) {
		f.fail(1, fmt.Errorf("watcher %d: unexpected write %d", w, seq))
		return
	}
	if seq >= watchWarmupEvents {
		f.lat[w] = append(f.lat[w], now-time.Duration(f.sent[seq].Load()))
	}
	if int(f.got[seq].Add(1)) == f.n {
		close(f.done[seq])
	}
}

func (f *fanout) fail(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors += n
	if f.first == nil {
		f.first = err
	}
}

// drive issues the writes, each once the previous reached every watcher,
// until the measured writes are all done or d has passed since the first
// of them; it returns how long the measured writes took. A failed write or
// a delivery that does not come stops it (and counts as errors).
func (f *fanout) drive(ctx context.Context, d time.Duration, write func(context.Context, int) error) (time.Duration, error) {
	var start, deadline time.Time
	for seq := range len(f.sent) {
		if seq == watchWarmupEvents {
			start, deadline = time.Now(), time.Now().Add(d)
			stopCPU := f.measureCPU()
			defer stopCPU()
		}
		if seq > watchWarmupEvents && time.Now().After(deadline) {
			break
		}
		t := time.Now()
		f.sent[seq].Store(int64(t.Sub(f.base)))
		if err := write(ctx, seq); err != nil {
			f.fail(f.n, fmt.Errorf("write %d: %w", seq, err))
			break
		}
		if seq >= watchWarmupEvents {
			f.writes = append(f.writes, time.Since(t))
		}
		select {
		case <-f.done[seq]:
			continue
		case <-time.After(eventTimeout):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		missing := f.n - int(f.got[seq].Load())
		f.fail(missing, fmt.Errorf("write %d: %d of %d watchers did not receive it within %s", seq, missing, f.n, eventTimeout))
		break
	}
	if start.IsZero() {
		return 0, nil
	}
	return time.Since(start), nil
}

// measureCPU starts reading the server's CPU time and returns what
// stops it (into f.cpu); an unreadable time counts as an error.
func (f *fanout) measureCPU() func() {
	if f.pid == 0 {
		return func() {}
	}
	before, err := proc.CPU(f.pid)
	return func() {
		after, err2 := proc.CPU(f.pid)
		if err = errors.Join(err, err2); err != nil {
			f.fail(1, err)
			return
		}
		d := after - before
		f.cpu = &d
	}
}

// row summarises the deliveries as a cell's row; the watchers must have
// stopped.
func (f *fanout) row(side string, elapsed time.Duration) report.Row {
	f.mu.Lock()
	defer f.mu.Unlock()
	res := cell.Result{Elapsed: elapsed, Latencies: slices.Concat(f.lat...), Errors: f.errors, FirstErr: f.first, CPU: f.cpu}
	r := res.Row(side, opWatch, f.n)
	w50, _ := cell.PercentilesMs(f.writes)
	r.Note = fmt.Sprintf("%d writes (p50 %s ms each), latency from before each write to each watcher", len(f.writes), report.FmtMs(w50))
	return r
}

// serverWatch measures delivery to Config.Watchers client-go watches of
// t's namespace while strategic merge patches change one ConfigMap, and
// t's server CPU time over the measured writes.
func (r *runner) serverWatch(ctx context.Context, t *target) (report.Row, error) {
	target := r.configMap(layout.WatchTarget)
	target.Data["seq"] = "-1"
	created, err := t.configMaps().Create(ctx, target, metav1.CreateOptions{})
	if err != nil {
		return report.Row{}, fmt.Errorf("bench: creating %s: %w", layout.WatchTarget, err)
	}
	f := newFanout(r.cfg.Watchers, r.cfg.WatchEvents)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchers := make([]watch.Interface, r.cfg.Watchers)
	err = cell.Parallel(ctx, len(watchers), 32, func(_ context.Context, w int) error {
		var err error
		watchers[w], err = t.configMaps().Watch(wctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		return err
	})
	var wg sync.WaitGroup
	stop := sync.OnceFunc(func() {
		f.stopped.Store(true)
		for _, w := range watchers {
			if w != nil {
				w.Stop()
			}
		}
		wg.Wait()
	})
	defer stop()
	if err != nil {
		return report.Row{}, fmt.Errorf("bench: starting %d watches: %w", len(watchers), err)
	}
	for w, wi := range watchers {
		wg.Go(func() { f.consumeStrata(w, wi) })
	}
	f.pid = t.pid
	elapsed, err := f.drive(ctx, r.cfg.Duration, func(ctx context.Context, seq int) error {
		body := fmt.Appendf(nil, `{"data":{"seq":"%d"}}`, seq)
		_, err := t.writer.CoreV1().ConfigMaps(layout.Namespace).Patch(ctx, layout.WatchTarget, types.StrategicMergePatchType, body, metav1.PatchOptions{})
		return err
	})
	stop()
	return f.row(t.side, elapsed), err
}

// consumeStrata receives one client-go watch's events until it is stopped.
func (f *fanout) consumeStrata(w int, wi watch.Interface) {
	for ev := range wi.ResultChan() {
		if f.stopped.Load() {
			continue
		}
		switch cm, ok := ev.Object.(*corev1.ConfigMap); {
		case ev.Type == watch.Error:
			f.fail(1, fmt.Errorf("watcher %d: %w", w, apierrors.FromObject(ev.Object)))
		case ev.Type != watch.Modified || !ok:
			f.fail(1, fmt.Errorf("watcher %d: unexpected %s event of %T", w, ev.Type, ev.Object))
		default:
			f.deliverSeq(w, cm.Data["seq"])
		}
	}
}

func (f *fanout) deliverSeq(w int, seq string) {
	n, err := strconv.Atoi(seq)
	if err != nil {
		f.fail(1, fmt.Errorf("watcher %d: seq %q: %w", w, seq, err))
		return
	}
	f.deliver(w, n)
}

// decoder is the deserializer client-go decodes watched objects with.
var decoder = scheme.Codecs.UniversalDeserializer()

// rawWatch measures delivery to Config.Watchers clientv3 watches of a
// prefix while puts change one key. Each watcher decodes the value with
// the deserializer client-go decodes the strata watchers' objects with, so
// that both sides' clients do about the same work (client-go also decodes
// the event's envelope).
func (r *runner) rawWatch(ctx context.Context) (report.Row, error) {
	f := newFanout(r.cfg.Watchers, r.cfg.WatchEvents)
	values, err := r.rawWatchValues(len(f.sent))
	if err != nil {
		return report.Row{}, err
	}
	prefix := layout.RawPrefix + "watch/"
	put, err := r.env.raw.Put(ctx, prefix+layout.WatchTarget, r.value)
	if err != nil {
		return report.Row{}, fmt.Errorf("bench: putting %s: %w", prefix+layout.WatchTarget, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop := sync.OnceFunc(func() {
		f.stopped.Store(true)
		cancel()
		wg.Wait()
	})
	defer stop()
	for w := range r.cfg.Watchers {
		ch := r.env.raw.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(put.Header.Revision+1))
		wg.Go(func() { f.consumeEtcd(w, ch) })
	}
	elapsed, err := f.drive(ctx, r.cfg.Duration, func(ctx context.Context, seq int) error {
		_, err := r.env.rawWriter.Put(ctx, prefix+layout.WatchTarget, values[seq])
		return err
	})
	stop()
	return f.row(sideEtcd, elapsed), err
}

// rawWatchValues are the stored ConfigMap's bytes with data.seq set to
// each write's number.
func (r *runner) rawWatchValues(n int) ([]string, error) {
	var cm corev1.ConfigMap
	if err := json.Unmarshal([]byte(r.value), &cm); err != nil {
		return nil, fmt.Errorf("bench: decoding a stored ConfigMap: %w", err)
	}
	values := make([]string, n)
	for i := range values {
		cm.Data["seq"] = strconv.Itoa(i)
		b, err := json.Marshal(&cm)
		if err != nil {
			return nil, fmt.Errorf("bench: encoding a ConfigMap: %w", err)
		}
		values[i] = string(b)
	}
	return values, nil
}

// consumeEtcd receives one clientv3 watch's events until it is cancelled.
func (f *fanout) consumeEtcd(w int, ch clientv3.WatchChan) {
	for resp := range ch {
		if f.stopped.Load() {
			continue
		}
		if err := resp.Err(); err != nil {
			if !errors.Is(err, context.Canceled) {
				f.fail(1, fmt.Errorf("watcher %d: %w", w, err))
			}
			continue
		}
		for _, ev := range resp.Events {
			obj, _, err := decoder.Decode(ev.Kv.Value, nil, nil)
			cm, ok := obj.(*corev1.ConfigMap)
			if err != nil || !ok {
				f.fail(1, fmt.Errorf("watcher %d: decoding a %T: %w", w, obj, err))
				continue
			}
			f.deliverSeq(w, cm.Data["seq"])
		}
	}
}
