package floor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/fieldmanager"
)

// The apply floor is the floor of a server-side apply by a server that
// reuses upstream's field manager, as strata does, and stores what
// kube-apiserver would: a PATCH of a Deployment reads the stored object from
// etcd, runs the field manager kube-apiserver builds for Deployments
// (strata's fieldmanager.Manager over k8s.io/apimachinery's managedfields,
// the same type models), defaults, converts and validates the result with
// upstream's Deployment strategy (validate.go), and writes it back if
// nothing changed it since the read (etcd's read+CAS). It does nothing
// else: no admission, authorization or watch cache. apply-floor ÷ read+cas
// is therefore the highest apply ÷ read+cas such a server can reach on this
// machine with this client.

// deploymentFieldManager is the field manager strata's registry builds
// for apps/v1 Deployments.
func deploymentFieldManager() (*fieldmanager.Manager, error) {
	k, err := builtinKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil {
		return nil, err
	}
	return k.FieldManager("")
}

// applyFloorHandler answers an apply of the Deployment the URL names.
func applyFloorHandler(raw *clientv3.Client, fm *fieldmanager.Manager) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		serveFloorWrite(w, r, func(ctx context.Context, config []byte) (int, []byte, error) {
			key := layout.RawPrefix + "floor-apply/" + path.Base(r.URL.Path)
			return applyFloor(ctx, raw, fm, key, config, r.URL.Query().Get("fieldManager"))
		})
	}
}

// applyFloor applies config to the Deployment stored under key (an empty
// one when there is none) and writes it back unless it changed since the
// read; it returns the status to answer and the object written.
func applyFloor(ctx context.Context, raw *clientv3.Client, fm *fieldmanager.Manager, key string, config []byte, manager string) (int, []byte, error) {
	got, err := raw.Get(ctx, key)
	if err != nil {
		return http.StatusInternalServerError, nil, err
	}
	var live, old runtime.Object // old: nil for a create
	var modRev int64
	status := http.StatusCreated
	if len(got.Kvs) == 0 {
		if live, err = fm.Empty(); err != nil {
			return http.StatusInternalServerError, nil, err
		}
	} else {
		d := &appsv1.Deployment{}
		if err := json.Unmarshal(got.Kvs[0].Value, d); err != nil {
			return http.StatusInternalServerError, nil, fmt.Errorf("%s: %w", key, err)
		}
		// Its resourceVersion is its etcd revision, as the store reads it.
		d.ResourceVersion = strconv.FormatInt(got.Kvs[0].ModRevision, 10)
		live, old, modRev, status = d, d, got.Kvs[0].ModRevision, http.StatusOK
	}
	obj, _, err := fm.Apply(live, config, fieldmanager.ApplyOptions{Manager: manager})
	if err != nil {
		return http.StatusConflict, nil, err
	}
	out, err := validated(ctx, deployments, layout.Namespace, obj, old)
	if err != nil {
		return http.StatusUnprocessableEntity, nil, err
	}
	if code, err := casPut(ctx, raw, key, modRev, out); err != nil {
		return code, nil, err
	}
	return status, out, nil
}
