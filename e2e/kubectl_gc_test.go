package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// testGarbageCollection deletes owners with each kubectl --cascade: the
// server's garbage collector deletes the dependents (background), deletes
// them before the owner goes (foreground: kubectl waits for the owner, so
// the dependent is gone when it returns), or keeps them without the
// reference (orphan).
func testGarbageCollection(t *testing.T, k *kubectl, ns string) {
	for _, cascade := range []string{"background", "foreground", "orphan"} {
		owner, dependent := cascade+"-owner", cascade+"-dependent"
		k.exact(t, "configmap/"+owner+" created\n", "create", "configmap", owner, "-n", ns)
		uid := k.ok(t, "get", "configmap", owner, "-n", ns, "-o", "jsonpath={.metadata.uid}")
		manifest := filepath.Join(t.TempDir(), dependent+".yaml")
		yaml := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: %s
    uid: %s
    blockOwnerDeletion: true
`, dependent, ns, owner, uid)
		if err := os.WriteFile(manifest, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		k.exact(t, "configmap/"+dependent+" created\n", "create", "-f", manifest)
		k.exact(t, `configmap "`+owner+`" deleted from `+ns+" namespace\n",
			"delete", "configmap", owner, "-n", ns, "--cascade="+cascade)
		notFound := `Error from server (NotFound): configmaps "` + dependent + `" not found` + "\n"
		switch cascade {
		case "background":
			err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 60*time.Second, true,
				func(context.Context) (bool, error) {
					r := k.run(t, "get", "configmap", dependent, "-n", ns)
					return r.code == 1 && r.stderr == notFound, nil
				})
			if err != nil {
				t.Errorf("background: the dependent is still there: %v", err)
			}
		case "foreground":
			if r := k.run(t, "get", "configmap", dependent, "-n", ns); r.code != 1 || r.stderr != notFound {
				t.Errorf("foreground: after the owner, want the dependent gone\n%v", r)
			}
		case "orphan":
			refs := k.ok(t, "get", "configmap", dependent, "-n", ns, "-o", "jsonpath={.metadata.ownerReferences}")
			if strings.TrimSpace(refs) != "" {
				t.Errorf("orphan: the dependent's ownerReferences are %s, want none", refs)
			}
		}
	}
}
