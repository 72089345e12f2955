package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// LoadConfig is what ServerLoad runs.
type LoadConfig struct {
	Servers         []string // strata-server binaries, run in turn
	Rounds, Clients int
	Duration        time.Duration // of each operation's cell
}

// ServerLoad measures strata-server as users run it, on its embedded
// etcd: each round starts each binary on an empty data directory, drives
// consistent GETs of one ConfigMap and creates of ConfigMaps (512-byte
// payload) from c.Clients clients for c.Duration each, and writes a line
// with each operation's requests per second and the server process's CPU
// per request (etcd's included: it runs in that process). The binaries
// alternate, round after round, so that a paired comparison shares the
// machine's drift. The cells of Run start strata on an etcd
// apart instead, to compare its process with kube-apiserver's.
func ServerLoad(ctx context.Context, c LoadConfig, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "strata-serverload-")
	if err != nil {
		return fmt.Errorf("bench: temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	tokens := filepath.Join(tmp, "tokens.csv")
	if err := servers.WriteTokens(tokens); err != nil {
		return err
	}
	for round := range c.Rounds {
		for i, bin := range c.Servers {
			rows, err := loadServer(ctx, c, bin, filepath.Join(tmp, fmt.Sprintf("%d-%d", round, i)), tokens)
			if err != nil {
				return fmt.Errorf("bench: %s: %w", bin, err)
			}
			fmt.Fprintf(out, "round %d  %s", round+1, bin)
			for _, r := range rows {
				fmt.Fprintf(out, "  %s %6.0f/s %5.0f µs CPU/req", r.Op, r.PerSec, *r.ServerCPUUsPerOp)
			}
			fmt.Fprintln(out)
		}
	}
	return nil
}

// loadServer starts bin on dir and runs the two operations' cells.
func loadServer(ctx context.Context, c LoadConfig, bin, dir, tokens string) (rows []report.Row, err error) {
	p, rc, err := servers.StartStrataServer(ctx, bin, servers.Spec{Mode: servers.ModeStrata, DataDir: dir, TokenFile: tokens}, dir+".log")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, p.Stop()) }()
	t, err := newTarget(sideStrata, rc, p.Pid())
	if err != nil {
		return nil, err
	}
	cms := t.cs.CoreV1().ConfigMaps(metav1.NamespaceDefault)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "get"}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	data := map[string]string{"payload": payload(512)}
	ops := []struct {
		name string
		run  func(context.Context, cell.Call) error
	}{
		{opGet, func(ctx context.Context, _ cell.Call) error {
			_, err := cms.Get(ctx, "get", metav1.GetOptions{})
			return err
		}},
		{opCreate, func(ctx context.Context, cl cell.Call) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%d", cl.I)}, Data: data}
			_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
			return err
		}},
	}
	for _, o := range ops {
		res, err := cell.Measured(t.pid, func() cell.Result { return cell.Run(ctx, c.Clients, c.Duration, 0, math.MaxInt, o.run) })
		if err != nil {
			return nil, err
		}
		if res.FirstErr != nil {
			return nil, fmt.Errorf("%s: %d errors, the first: %w", o.name, res.Errors, res.FirstErr)
		}
		rows = append(rows, res.Row(sideStrata, o.name, c.Clients))
	}
	return rows, nil
}
