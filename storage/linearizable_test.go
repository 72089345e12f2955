package storage

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// regInput is one operation on a register kept in one object's spec.size:
// a write through GuaranteedUpdate or a quorum Get.
type regInput struct {
	write bool
	value int64
}

// registerModel is a linearizable register: a read returns the last write.
var registerModel = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		in := input.(regInput)
		if in.write {
			return true, in.value
		}
		return output.(int64) == state.(int64), state
	},
	DescribeOperation: func(input, output any) string {
		if in := input.(regInput); in.write {
			return fmt.Sprintf("write(%d)", in.value)
		}
		return fmt.Sprintf("read() = %d", output)
	},
}

// TestLinearizableUpdatesAndGets checks with porcupine that concurrent
// guaranteed updates and consistent gets (no resourceVersion) of one object
// form a linearizable history. Consistent gets are served from the watch
// cache after a shared revision read; the second case reads through another
// store on the same resource (another server on the same etcd), whose cache
// learns of the writes only through its watch, and checks that every read
// was served from that cache rather than by the fallback etcd read.
func TestLinearizableUpdatesAndGets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		secondStore bool
	}{
		{name: "one store"},
		{name: "reads through a second store", secondStore: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writer := newTestStore(t)
			reader, etcdOps := writer, &opCounter{}
			if tc.secondStore {
				reader = newTestStore(t, func(c *Config) {
					c.Resource, c.Observe = writer.cfg.Resource, etcdOps.observe
				})
			}
			obj := widget("lin", "reg", nil)
			unstructured.SetNestedField(obj.Object, int64(0), "spec", "size")
			mustCreate(t, writer, obj)
			ops := registerHistory(t, writer, reader)
			if res := porcupine.CheckOperationsTimeout(registerModel, ops, 30*time.Second); res != porcupine.Ok {
				t.Fatalf("history of %d operations is not linearizable (%v)", len(ops), res)
			}
			if !tc.secondStore {
				return
			}
			gets, revs := etcdOps.count("get"), etcdOps.count("currentRevision")
			if gets != 0 || revs == 0 || revs > 50 {
				t.Fatalf("reading store: %d etcd gets and %d revision reads for 50 reads; want 0 gets and 1 to 50 revision reads", gets, revs)
			}
		})
	}
}

// registerHistory runs 4 clients of 25 operations each, alternating writes
// through writer and reads through reader, and returns the history.
func registerHistory(t *testing.T, writer, reader *Store) []porcupine.Operation {
	var (
		mu  sync.Mutex
		ops []porcupine.Operation
		wg  sync.WaitGroup
	)
	start := time.Now()
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				s, write := reader, i%2 == 0
				if write {
					s = writer
				}
				op := runRegisterOp(t, s, c, int64(c*100+i+1), write, start)
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ops
}

// opCounter counts a store's etcd requests by operation (Config.Observe).
type opCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *opCounter) observe(op string, _ time.Duration, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
}

func (c *opCounter) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

func runRegisterOp(t *testing.T, s *Store, client int, value int64, write bool, start time.Time) porcupine.Operation {
	ctx := context.Background()
	op := porcupine.Operation{ClientId: client, Input: regInput{write: write, value: value}, Call: int64(time.Since(start))}
	if write {
		_, err := s.GuaranteedUpdate(ctx, "lin", "reg", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return cur, unstructured.SetNestedField(cur.Object, value, "spec", "size")
		})
		if err != nil {
			t.Error(err)
		}
		op.Output = int64(0)
	} else {
		got, err := s.Get(ctx, "lin", "reg", GetOptions{})
		if err != nil {
			t.Error(err)
			op.Output = int64(-1)
		} else {
			op.Output = size(got)
		}
	}
	op.Return = int64(time.Since(start))
	return op
}
