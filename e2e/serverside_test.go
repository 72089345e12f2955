package e2e

import (
	"slices"
	"strings"
	"testing"
)

// testServerSideApply applies a Deployment server-side, re-applies it,
// meets a conflict as another manager, forces it, diffs and dry-runs a
// change on the server, and removes a label by no longer applying it.
func testServerSideApply(t *testing.T, k *kubectl, ns string) {
	web, web5 := testdata(t, "ssa-web.yaml"), testdata(t, "ssa-web-5.yaml")
	get := func(path string) []string {
		return []string{"get", "deployment", "web", "-n", ns, "-o", "jsonpath=" + path}
	}
	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "-n", ns, "-f", web)
	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "-n", ns, "-f", web)
	k.exact(t, "kubectl/Apply", get(`{range .metadata.managedFields[*]}{.manager}/{.operation}{end}`)...)

	r := k.run(t, "apply", "--server-side", "--field-manager=bob", "-n", ns, "-f", web5)
	if r.code != 1 || !strings.Contains(r.stderr, `Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`) {
		t.Fatalf("want exit 1 and the conflict with kubectl on .spec.replicas\n%v", r)
	}
	k.exact(t, "2", get("{.spec.replicas}")...)

	k.exact(t, "deployment.apps/web serverside-applied (server dry run)\n",
		"apply", "--server-side", "--dry-run=server", "--force-conflicts", "-n", ns, "-f", web5)
	k.exact(t, "2", get("{.spec.replicas}")...)

	r = k.run(t, "diff", "--server-side", "--force-conflicts", "-n", ns, "-f", web5)
	if r.code != 1 || !strings.Contains(r.stdout, "-  replicas: 2\n") || !strings.Contains(r.stdout, "+  replicas: 5\n") ||
		!strings.Contains(r.stdout, "-    tier: front\n") {
		t.Fatalf("want exit 1 and a diff from 2 to 5 replicas without the tier label\n%v", r)
	}

	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-n", ns, "-f", web5)
	k.exact(t, "5 front", get("{.spec.replicas} {.metadata.labels.tier}")...)

	// kubectl scale writes the scale subresource with no fieldManager: the
	// write is recorded under its user agent's first word, with
	// subresource scale, and takes the replicas from bob.
	k.exact(t, "deployment.apps/web scaled\n", "scale", "deployment", "web", "-n", ns, "--replicas=4")
	r = k.run(t, "apply", "--server-side", "--field-manager=bob", "-n", ns, "-f", web5)
	if r.code != 1 || !strings.Contains(r.stderr, `Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`) {
		t.Fatalf("want exit 1 and the conflict with kubectl's scale\n%v", r)
	}
	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-n", ns, "-f", web5)
	// kubectl no longer applies the label and bob never did: it goes.
	// Both apply 5 replicas: no conflict.
	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "-n", ns, "-f", web5)
	k.exact(t, "5 ", get("{.spec.replicas} {.metadata.labels.tier}")...)
}

// testClientToServerSide applies client-side, then server-side: kubectl
// moves the ownership that the last-applied annotation records to its
// server-side manager, so dropping a field from the configuration then
// removes it.
func testClientToServerSide(t *testing.T, k *kubectl, ns string) {
	web, web5 := testdata(t, "ssa-web.yaml"), testdata(t, "ssa-web-5.yaml")
	k.exact(t, "deployment.apps/web created\n", "apply", "-n", ns, "-f", web)
	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "-n", ns, "-f", web)
	k.exact(t, "deployment.apps/web serverside-applied\n", "apply", "--server-side", "-n", ns, "-f", web5)
	k.exact(t, "5 ", "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.spec.replicas} {.metadata.labels.tier}")
	// kubectl-client-side-apply's ownership has moved to kubectl; kubectl
	// owns the last-applied annotation as kubectl-last-applied.
	managers := strings.Fields(k.ok(t, "get", "deployment", "web", "-n", ns, "-o",
		`jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation}{"\n"}{end}`))
	slices.Sort(managers)
	if want := []string{"kubectl-last-applied/Apply", "kubectl/Apply"}; !slices.Equal(managers, want) {
		t.Fatalf("managers %q, want %q", managers, want)
	}
}

// testApplySet prunes, with an ApplySet (client-side, then server-side),
// the object a second apply of the set no longer holds.
func testApplySet(t *testing.T, k *kubectl, ns string) {
	withSets := *k
	withSets.env = append(slices.Clone(k.env), "KUBECTL_APPLYSET=true")
	for _, tc := range []struct{ set, flag, first, again string }{
		{"set-csa", "--server-side=false", "created", "unchanged"},
		{"set-ssa", "--server-side", "serverside-applied", "serverside-applied"},
	} {
		args := []string{"apply", "-n", ns, "--prune", "--applyset=" + tc.set, tc.flag, "-f"}
		withSets.exact(t, "configmap/a "+tc.first+"\nconfigmap/b "+tc.first+"\n", append(args, testdata(t, "applyset-ab"))...)
		withSets.exact(t, "configmap/a "+tc.again+"\nconfigmap/b pruned\n", append(args, testdata(t, "applyset-a"))...)
		k.exact(t, "a", "get", "configmaps", "-n", ns, "-l", "applyset.kubernetes.io/part-of", "-o", "jsonpath={.items[*].metadata.name}")
		k.exact(t, `configmap "a" deleted from `+ns+" namespace\n", "delete", "configmap", "a", "-n", ns)
	}
}

// testPruneAllowList prunes by label, without an ApplySet: kubectl looks
// for objects to prune in every resource of its default allow-list
// (Endpoints, PersistentVolumes, ReplicationControllers, ... among them),
// so each must be served.
func testPruneAllowList(t *testing.T, k *kubectl, ns string) {
	args := []string{"apply", "-n", ns, "--prune", "-l", "app=prune", "-f"}
	for _, step := range []struct{ dir, want string }{
		{"prune-ab", "configmap/a created\nservice/b created\n"},
		{"prune-a", "configmap/a unchanged\nservice/b pruned\n"},
	} {
		r := k.run(t, append(args, testdata(t, step.dir))...)
		// kubectl's own warning about --namespace, and nothing else.
		const deprecated = "Deprecated: kubectl apply will no longer prune non-namespaced resources by default when used with the --namespace flag"
		if r.code != 0 || r.stdout != step.want || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, deprecated) {
			t.Fatalf("%s: want exit 0, stdout %q and kubectl's deprecation warning\n%v", k.name, step.want, r)
		}
	}
	k.exact(t, "a", "get", "configmaps,services", "-n", ns, "-l", "app=prune", "-o", "jsonpath={.items[*].metadata.name}")
}
