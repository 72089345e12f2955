package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestServices runs strata server with its own service ranges: the
// kubernetes Service takes the range's first IP and has endpoints, a
// NodePort Service gets an IP and a port from the ranges, and after a
// restart neither is handed out again.
func TestServices(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	flags := append(portFlag(freePort(t)), "--service-cluster-ip-range", "10.100.0.0/24",
		"--service-node-port-range", "31000-31010")
	srv := startServer(t, dataDir, flags...)
	k := strataKubectl(t, dataDir)
	waitOK(t, k, "10.100.0.1 443 https", "get", "service", "kubernetes", "-o",
		`jsonpath={.spec.clusterIP} {.spec.ports[0].port} {.spec.ports[0].name}`)
	waitOK(t, k, "https", "get", "endpoints", "kubernetes", "-o", `jsonpath={.subsets[0].ports[0].name}`)
	waitOK(t, k, "https", "get", "endpointslices", "kubernetes", "-o", `jsonpath={.ports[0].name}`)

	k.exact(t, "service/web created\n", "create", "service", "nodeport", "web", "--tcp=80:8080")
	web := strings.Fields(k.ok(t, "get", "service", "web", "-o", `jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}`))
	if len(web) != 2 || !strings.HasPrefix(web[0], "10.100.0.") || web[1] < "31000" || web[1] > "31010" {
		t.Fatalf("web: clusterIP and nodePort %q, want 10.100.0.x and 31000-31010", web)
	}

	srv.stop(t)
	if t.Failed() {
		t.FailNow()
	}
	startServer(t, dataDir, flags...)
	r := k.run(t, "create", "service", "clusterip", "again", "--tcp=80", "--clusterip="+web[0])
	if r.code == 0 || !strings.Contains(r.stderr, "spec.clusterIPs: Invalid value: [\""+web[0]+"\"]: failed to allocate IP "+
		web[0]+": provided IP is already allocated") {
		t.Errorf("requesting web's IP after a restart: want kube-apiserver's 422\n%v", r)
	}
	r = k.run(t, "create", "service", "nodeport", "again", "--tcp=80:8080", "--node-port="+web[1])
	if r.code == 0 || !strings.Contains(r.stderr, "provided port is already allocated") {
		t.Errorf("requesting web's node port after a restart: want kube-apiserver's 422\n%v", r)
	}
}

// waitOK runs kubectl until it prints want (the bootstrap controller
// creates the kubernetes Service just after the server starts serving).
func waitOK(t *testing.T, k *kubectl, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := k.run(t, args...)
		if r.code == 0 && r.stdout == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %q\n%v", want, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
