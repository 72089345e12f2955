package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// podSecurityRestricted is what PodSecurity's restricted level finds in
// testdata/pod-plain.yaml, in kube-apiserver's words.
const podSecurityRestricted = `"restricted:latest": ` +
	`allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

// TestKubectlPodSecurity: with both kubectls, applying a pod without a
// securityContext to a namespace labelled for PodSecurity's restricted
// level is refused with kube-apiserver's message (enforce), or created
// with its warning (warn).
func TestKubectlPodSecurity(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	startServer(t, dataDir)
	pod := testdata(t, "pod-plain.yaml")
	for _, kind := range kubectls {
		t.Run(kind.name, func(t *testing.T) {
			k := kind.new(t, dataDir)
			for _, mode := range []string{"enforce", "warn"} {
				ns := "pss-" + mode + "-" + kind.name
				k.exact(t, "namespace/"+ns+" created\n", "create", "namespace", ns)
				k.exact(t, "namespace/"+ns+" labeled\n", "label", "namespace", ns, "pod-security.kubernetes.io/"+mode+"=restricted")
				k.waitDefaultServiceAccount(t, ns)
				r := k.run(t, "apply", "-n", ns, "-f", pod)
				want := result{args: r.args, code: 1,
					stderr: `Error from server (Forbidden): error when creating "` + pod + `": pods "plain" is forbidden: violates PodSecurity ` +
						podSecurityRestricted + "\n"}
				if mode == "warn" {
					want.code, want.stdout = 0, "pod/plain created\n"
					want.stderr = "Warning: would violate PodSecurity " + podSecurityRestricted + "\n"
				}
				if r.String() != want.String() {
					t.Errorf("%s:\n got %v\nwant %v", mode, r, want)
				}
			}
		})
	}
}

// waitDefaultServiceAccount waits for the namespace's default
// ServiceAccount, as kube's e2e framework does before creating pods: until
// the controller has made it, the ServiceAccount admission plugin refuses
// pods (`error looking up service account ns/default`).
func (k *kubectl) waitDefaultServiceAccount(t *testing.T, ns string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := k.run(t, "get", "serviceaccount", "default", "-n", ns, "-o", "name")
		if r.code == 0 && r.stdout == "serviceaccount/default\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no default ServiceAccount in %s:\n%v", ns, r)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestServerHelpAdmissionFlags: strata server --help lists kube-apiserver's
// admission flags.
func TestServerHelpAdmissionFlags(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out, err := exec.Command(strataBin, "server", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--enable-admission-plugins strings", "--disable-admission-plugins strings",
		"--admission-control-config-file string"} {
		if !strings.Contains(string(out), "      "+flag+" ") {
			t.Errorf("strata server --help has no %q:\n%s", flag, out)
		}
	}
}
