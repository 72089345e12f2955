package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestRestart stops a server gracefully and starts it again on the same
// data directory and port: the objects (same uid and resourceVersion), the
// credentials and the kubeconfig are the same, and the old kubeconfig
// and a service-account token issued before still work.
func TestRestart(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	port := portFlag(freePort(t))
	srv := startServer(t, dataDir, port...)
	k := strataKubectl(t, dataDir)
	k.exact(t, "namespace/keep created\n", "create", "namespace", "keep")
	k.exact(t, "configmap/settings created\n", "create", "configmap", "settings", "-n", "keep", "--from-literal=color=blue")
	k.exact(t, "deployment.apps/web created\n", "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "-n", "keep")
	identity := []string{"get", "configmap/settings", "deployment/web", "-n", "keep", "-o",
		`jsonpath={range .items[*]}{.kind} {.metadata.uid} {.metadata.resourceVersion}{"\n"}{end}`}
	before := k.ok(t, identity...)
	k.exact(t, "serviceaccount/keeper created\n", "create", "serviceaccount", "keeper", "-n", "keep")
	saToken := strings.TrimSpace(k.ok(t, "create", "token", "keeper", "-n", "keep"))

	pkiBefore := readDir(t, srv.pkiDir())
	for _, name := range []string{"ca.crt", "server.crt", "admin.token", "sa.key"} {
		if _, ok := pkiBefore[name]; !ok {
			t.Fatalf("no %s in %s (files: %v)", name, srv.pkiDir(), keys(pkiBefore))
		}
	}
	oldKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfigBefore := readFile(t, srv.kubeconfig())
	if err := os.WriteFile(oldKubeconfig, kubeconfigBefore, 0o600); err != nil {
		t.Fatal(err)
	}

	srv.stop(t)
	if t.Failed() {
		t.FailNow()
	}
	srv = startServer(t, dataDir, port...)

	if pkiAfter := readDir(t, srv.pkiDir()); !equalFiles(pkiBefore, pkiAfter) {
		t.Errorf("%s changed across the restart:\nbefore %v\nafter  %v", srv.pkiDir(), keys(pkiBefore), keys(pkiAfter))
		for name, data := range pkiBefore {
			if !bytes.Equal(data, pkiAfter[name]) {
				t.Errorf("%s differs", name)
			}
		}
	}
	if after := readFile(t, srv.kubeconfig()); !bytes.Equal(after, kubeconfigBefore) {
		t.Errorf("kubeconfig changed across the restart:\nbefore:\n%s\nafter:\n%s", kubeconfigBefore, after)
	}

	old := kubectlWithConfig(t, oldKubeconfig)
	if after := old.ok(t, identity...); after != before {
		t.Errorf("objects after the restart:\n%s\nwant (uid and resourceVersion unchanged):\n%s", after, before)
	}
	old.exact(t, "blue", "get", "configmap", "settings", "-n", "keep", "-o", "jsonpath={.data.color}")
	checkTable(t, old.ok(t, "get", "deployments", "-n", "keep"), [][]string{
		{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"},
		{"web", "0/2", "0", "0", ageCell},
	})
	// The service-account signing key is kept: tokens stay valid.
	old.exact(t, "system:serviceaccount:keep:keeper", "--token", saToken, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	// The server goes on writing after the restart.
	k.exact(t, "configmap/more created\n", "create", "configmap", "more", "-n", "keep")
}

// TestCrash kills a server (SIGKILL) while it is being written to, starts
// it again on the same data directory, and finds every write it had
// acknowledged: creations by kubectl one at a time, an update, and
// creations by concurrent HTTP clients that were still running at the kill.
func TestCrash(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	k := plainKubectl(t, dataDir)
	k.exact(t, "namespace/crash created\n", "create", "namespace", "crash")

	var acked []string // names of ConfigMaps whose creation was acknowledged
	for i := range 10 {
		name := fmt.Sprintf("kubectl-%d", i)
		k.exact(t, "configmap/"+name+" created\n", "create", "configmap", name, "-n", "crash", "--from-literal=i="+fmt.Sprint(i))
		acked = append(acked, name)
	}
	k.exact(t, "configmap/kubectl-0 patched\n", "patch", "configmap", "kubectl-0", "-n", "crash", "--type", "merge", "-p", `{"data":{"i":"updated"}}`)

	// Writers that are still sending when the server dies.
	cfg := srv.restConfig(t)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Timeout = 5 * time.Second
	var (
		mu      sync.Mutex
		written = 0
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("http-%d-%d", w, i)
				body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"w":"x"}}`
				resp, err := client.Post(cfg.Host+"/api/v1/namespaces/crash/configmaps", "application/json", strings.NewReader(body))
				if err != nil {
					return // the server is gone
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					return
				}
				mu.Lock()
				acked = append(acked, name)
				written++
				mu.Unlock()
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := written
		mu.Unlock()
		if n >= 200 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.kill(t)
	close(stop)
	wg.Wait()
	if written == 0 {
		t.Fatal("no HTTP creation acknowledged before the kill")
	}

	startServer(t, dataDir)
	out := k.ok(t, "get", "configmaps", "-n", "crash", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`)
	have := strings.Fields(out)
	var missing []string
	for _, name := range acked {
		if !slices.Contains(have, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d acknowledged creations lost in the crash: %v", len(missing), len(acked), missing)
	}
	k.exact(t, "updated", "get", "configmap", "kubectl-0", "-n", "crash", "-o", "jsonpath={.data.i}")
	t.Logf("%d creations acknowledged (%d over HTTP), %d ConfigMaps after the restart", len(acked), written, len(have))
}

// readDir reads every regular file of dir.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			files[e.Name()] = readFile(t, filepath.Join(dir, e.Name()))
		}
	}
	return files
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, data := range a {
		if other, ok := b[name]; !ok || !bytes.Equal(data, other) {
			return false
		}
	}
	return true
}

func keys(m map[string][]byte) []string {
	var names []string
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
