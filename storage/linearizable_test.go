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
// guaranteed updates and quorum gets of one object form a linearizable
// history.
func TestLinearizableUpdatesAndGets(t *testing.T) {
	s := newTestStore(t)
	obj := widget("lin", "reg", nil)
	unstructured.SetNestedField(obj.Object, int64(0), "spec", "size")
	mustCreate(t, s, obj)
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
				op := runRegisterOp(t, s, c, int64(c*100+i+1), i%2 == 0, start)
				mu.Lock()
				ops = append(ops, op)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if res := porcupine.CheckOperationsTimeout(registerModel, ops, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(ops), res)
	}
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
