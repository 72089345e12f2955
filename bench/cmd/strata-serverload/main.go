// Command strata-serverload measures strata-server as users run it, on its
// embedded etcd: each round starts each binary given on an empty data
// directory, drives consistent GETs of one ConfigMap and creates of
// ConfigMaps (512-byte payload) with client-go at -clients for -duration
// each, and reports requests per second and the server process's CPU per
// request (from /proc, etcd's work included: it runs in that process).
// The binaries alternate, round after round, so that a paired comparison
// shares the machine's drift (issue 18). strata-bench's cells run strata
// on an etcd apart instead, to compare its server process with
// kube-apiserver's.
//
//	strata-serverload -servers /tmp/a/strata-server,/tmp/b/strata-server [-rounds 2] [-clients 16] [-duration 8s]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/bench"
)

type config struct {
	servers         []string
	rounds, clients int
	port            int
	duration        time.Duration
}

func main() {
	var c config
	servers := flag.String("servers", "strata-server", "comma-separated strata-server binaries, run in turn")
	flag.IntVar(&c.rounds, "rounds", 2, "rounds; each runs every binary once")
	flag.IntVar(&c.clients, "clients", 16, "concurrent clients")
	flag.IntVar(&c.port, "port", 16444, "port the server serves on")
	flag.DurationVar(&c.duration, "duration", 8*time.Second, "length of each operation's run")
	flag.Parse()
	c.servers = strings.Split(*servers, ",")
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "strata-serverload:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	for round := range c.rounds {
		for _, bin := range c.servers {
			line, err := c.measure(bin)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			fmt.Printf("round %d  %s  %s\n", round+1, bin, line)
		}
	}
	return nil
}

// measure starts bin on a new data directory and runs both operations.
func (c config) measure(bin string) (string, error) {
	dir, err := os.MkdirTemp("", "strata-serverload")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, "--data-dir", dir, "--secure-port", strconv.Itoa(c.port))
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return "", err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	cs, err := waitReady(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return "", err
	}
	var out []string
	for _, op := range []string{"get", "create"} {
		n, cpu, err := c.drive(cs, cmd.Process.Pid, op)
		if err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, fmt.Sprintf("%s %6.0f/s %5.0f µs CPU/req", op, float64(n)/c.duration.Seconds(), cpu/float64(n)*1e6))
	}
	return strings.Join(out, "  "), nil
}

// waitReady waits for the server's kubeconfig and a namespace list.
func waitReady(kubeconfig string) (kubernetes.Interface, error) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig); err == nil {
			rc.QPS, rc.Burst = -1, 1000
			cs, err := kubernetes.NewForConfig(rc)
			if err == nil {
				if _, err = cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{Limit: 1}); err == nil {
					return cs, nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, errors.New("not ready within a minute")
}

// drive runs op at c.clients for c.duration and returns the requests
// served and the server's CPU seconds meanwhile.
func (c config) drive(cs kubernetes.Interface, pid int, op string) (int64, float64, error) {
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "get"}}, metav1.CreateOptions{}); err != nil && op == "get" {
		return 0, 0, err
	}
	payload := strings.Repeat("x", 512)
	var n atomic.Int64
	errs := make([]error, c.clients)
	before, err := bench.ProcessCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	deadline := time.Now().Add(c.duration)
	var wg sync.WaitGroup
	for w := range c.clients {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				var err error
				if op == "get" {
					_, err = cms.Get(ctx, "get", metav1.GetOptions{})
				} else {
					cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("c-%d-%d", w, i)}, Data: map[string]string{"payload": payload}}
					_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
				}
				if err != nil {
					errs[w] = err
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	after, err := bench.ProcessCPU(pid)
	return n.Load(), (after - before).Seconds(), errors.Join(append(errs, err)...)
}
