// Command strata-startup measures strata-server's start-up to ready: the
// time from starting the process to /readyz answering 200, on an empty
// data directory and again on one holding -objects ConfigMaps (issue 18).
// Each start is a process of its own, stopped (SIGTERM) before the next;
// its log, at --log-level debug, is kept in the work directory, where the
// "start-up step done" lines say where the time went.
//
//	strata-startup -server /tmp/su/strata-server [-runs 5] [-objects 20000] [-plain-http]
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type config struct {
	server, work         string
	runs, objects        int
	bytes, port          int
	plainHTTP, skipEmpty bool
}

func main() {
	var c config
	flag.StringVar(&c.server, "server", "strata-server", "the strata-server binary")
	flag.StringVar(&c.work, "work", "", "work directory (default: a temporary one, removed after)")
	flag.IntVar(&c.runs, "runs", 5, "starts measured in each setting")
	flag.IntVar(&c.objects, "objects", 20000, "ConfigMaps loaded for the loaded setting (0: empty only)")
	flag.IntVar(&c.bytes, "bytes", 1024, "payload bytes of each ConfigMap")
	flag.IntVar(&c.port, "port", 16443, "port the server serves on")
	flag.BoolVar(&c.plainHTTP, "plain-http", false, "start the server with --plain-http")
	flag.BoolVar(&c.skipEmpty, "skip-empty", false, "measure only the loaded setting")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "strata-startup:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if c.work == "" {
		dir, err := os.MkdirTemp("", "strata-startup")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.work = dir
	}
	// A -work directory that does not exist yet is made, as the server
	// makes its data directory.
	if err := os.MkdirAll(c.work, 0o700); err != nil {
		return fmt.Errorf("-work: %w", err)
	}
	if !c.skipEmpty {
		var times []time.Duration
		for i := range c.runs {
			dir := filepath.Join(c.work, fmt.Sprintf("empty-%d", i))
			d, err := c.start(dir, fmt.Sprintf("empty-%d.log", i), nil)
			if err != nil {
				return err
			}
			times = append(times, d)
			os.RemoveAll(dir)
		}
		report("empty", times)
	}
	if c.objects == 0 {
		return nil
	}
	dir := filepath.Join(c.work, "loaded")
	if _, err := os.Stat(dir); err != nil {
		if _, err := c.start(dir, "load.log", c.load); err != nil {
			return err
		}
	}
	var times []time.Duration
	for i := range c.runs {
		d, err := c.start(dir, fmt.Sprintf("loaded-%d.log", i), nil)
		if err != nil {
			return err
		}
		times = append(times, d)
	}
	report(fmt.Sprintf("%d ConfigMaps of %d B", c.objects, c.bytes), times)
	return nil
}

func report(setting string, times []time.Duration) {
	s := slices.Clone(times)
	slices.Sort(s)
	fmt.Printf("%-28s min %6.3fs  median %6.3fs  max %6.3fs  (%d runs: %v)\n", setting,
		s[0].Seconds(), s[len(s)/2].Seconds(), s[len(s)-1].Seconds(), len(s), times)
}

// start runs the server on dir until /readyz answers 200, then calls
// then (if any) and stops it; it returns the time to ready.
func (c config) start(dir, logName string, then func(dir string) error) (time.Duration, error) {
	args := []string{"--data-dir", dir, "--secure-port", fmt.Sprint(c.port), "--log-level", "debug"}
	if c.plainHTTP {
		args = append(args, "--plain-http")
	}
	logFile, err := os.Create(filepath.Join(c.work, logName))
	if err != nil {
		return 0, err
	}
	defer logFile.Close()
	// Another server on the port would answer for this one.
	if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", c.port)); err == nil {
		conn.Close()
		return 0, fmt.Errorf("port %d is already in use (-port)", c.port)
	}
	cmd := exec.Command(c.server, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	d, err := c.waitReady(begin, exited)
	if err == nil {
		// CPU time tells the work apart from the machine's load, which on
		// a shared machine stretches the wall time.
		cpu, _ := cpuTime(cmd.Process.Pid)
		fmt.Fprintf(os.Stderr, "%s: ready after %.3fs, CPU %.2fs\n", logName, d.Seconds(), cpu.Seconds())
	}
	if err == nil && then != nil {
		err = then(dir)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
	return d, err
}

// waitReady polls /readyz every 5 ms.
func (c config) waitReady(begin time.Time, exited chan error) (time.Duration, error) {
	scheme := "https"
	if c.plainHTTP {
		scheme = "http"
	}
	url := fmt.Sprintf("%s://127.0.0.1:%d/readyz", scheme, c.port)
	// The probe only asks whether the server is ready, as a load balancer
	// would, anonymously; which certificate answers does not matter here.
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	for time.Since(begin) < 2*time.Minute {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(begin), nil
			}
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the server exited before it was ready: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("not ready after 2 minutes")
}

// load creates the ConfigMaps, 64 at a time, through the kubeconfig the
// server wrote.
func (c config) load(dir string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return err
	}
	if c.plainHTTP {
		rc.Host = fmt.Sprintf("http://127.0.0.1:%d", c.port)
	}
	rc.QPS, rc.Burst = -1, -1
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx := context.Background()
	const ns = "footprint"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	data := strings.Repeat("x", c.bytes)
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	for range 64 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < c.objects && first.Load() == nil; i = int(next.Add(1) - 1) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fp-%05d", i)},
					Data: map[string]string{"data": data}}
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return fmt.Errorf("loading ConfigMaps: %w", *p)
	}
	return nil
}

// cpuTime is the user and system CPU time pid has used so far
// (/proc/PID/stat, in clock ticks of 10 ms).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which ends in the last ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	var utime, stime int64
	fmt.Sscan(fields[11], &utime)
	fmt.Sscan(fields[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
