package storage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/storage/etcd"
)

// crashChildEnv, when set to a data directory, turns the test binary into
// the crash test's writer process.
const crashChildEnv = "STRATA_STORAGE_CRASH_CHILD_DIR"

var crashResource = schema.GroupResource{Group: "example.com", Resource: "crashwidgets"}

// crashChild starts etcd on dir and creates objects in a loop, printing
// "ack N" after each acknowledged create, until it is killed.
func crashChild(dir string) int {
	srv, err := startEtcd(context.Background(), etcd.Options{DataDir: dir, LogLevel: "fatal"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cli, err := srv.Client()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, err := New(Config{Client: cli, Resource: crashResource, Namespaced: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		if _, err := s.Create(context.Background(), widget("crash", fmt.Sprintf("w%d", i), nil)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("ack %d\n", i)
	}
}

// TestCrashKeepsAcknowledgedWrites: a child process writing in a loop is
// SIGKILLed; after etcd restarts on the same data directory every write it
// had acknowledged is there.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two etcd members")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := readAcks(t, out, 200)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := startEtcd(ctx, etcd.Options{DataDir: dir, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-srv.Done() }()
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, err := New(Config{Client: cli, Resource: crashResource, Namespaced: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i <= acked; i++ {
		if _, err := s.Get(ctx, "crash", fmt.Sprintf("w%d", i), GetOptions{}); err != nil {
			t.Fatalf("acknowledged write w%d lost after SIGKILL: %v", i, err)
		}
	}
	t.Logf("%d acknowledged writes survived SIGKILL", acked+1)
}

// readAcks reads the child's acknowledgements until it has acked n writes
// (or 20 seconds pass) and returns the last acknowledged index.
func readAcks(t *testing.T, out interface{ Read([]byte) (int, error) }, n int) int {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	last, deadline := -1, time.After(20*time.Second)
	for last < n {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child exited after %d acks", last+1)
			}
			var i int
			if _, err := fmt.Sscanf(l, "ack %d", &i); err == nil && strings.HasPrefix(l, "ack") {
				last = i
			}
		case <-deadline:
			if last < 0 {
				t.Fatal("child acknowledged nothing in 20s")
			}
			return last
		}
	}
	return last
}
