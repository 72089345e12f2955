package floor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
	strataschema "github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// The write floors are the floor of an update and of a
// strategic PATCH of a ConfigMap by a server that records managedFields
// with upstream's field manager, as kube-apiserver does on every write
// and strata reuses, and validates what it stores as kube-apiserver
// does: read the stored ConfigMap from etcd, take the PUT's object (or
// merge the patch into the stored one, with strata's strategic merge
// patch), let the field manager strata builds for ConfigMaps record the
// write, run upstream's ConfigMap strategy and validation on the internal
// type (rest.BeforeUpdate, as kube-apiserver's store does; validate.go), and write the
// result back if nothing changed it since the read. Nothing else: no
// admission, authorization or watch cache. Their CPU per request is the
// least such a server spends on these writes.

// FMNamespace is where the create floor of a server that records
// managedFields and validates creates its objects: the handler tells them
// apart from the do-nothing create's by it.
const FMNamespace = "floor-fm"

// builtinKind is the kind strata's registry serves as gvk.
func builtinKind(gvk schema.GroupVersionKind) (*registry.Kind, error) {
	for _, k := range registry.Builtin() {
		if k.GVK == gvk {
			return k, nil
		}
	}
	return nil, fmt.Errorf("floor: the registry serves no %v", gvk)
}

// configMapWriter is what the write floors need of the ConfigMap kind.
type configMapWriter struct {
	fm    *fieldmanager.Manager
	patch strataschema.Type
}

func newConfigMapWriter() (*configMapWriter, error) {
	k, err := builtinKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if err != nil {
		return nil, err
	}
	fm, err := k.FieldManager("")
	if err != nil {
		return nil, err
	}
	t, ok, err := k.PatchSchema()
	if err == nil && !ok {
		err = fmt.Errorf("floor: ConfigMaps have no patch schema")
	}
	return &configMapWriter{fm: fm, patch: t}, err
}

// ConfigMapKey is the etcd key of the ConfigMap the write floors update
// and patch.
func ConfigMapKey(name string) string { return layout.RawPrefix + "floor-cm/" + name }

// serveHTTP answers a PUT or strategic PATCH of the ConfigMap the URL
// names.
func (cw *configMapWriter) serveHTTP(raw *clientv3.Client, w http.ResponseWriter, r *http.Request) {
	serveFloorWrite(w, r, func(ctx context.Context, body []byte) (int, []byte, error) {
		return cw.write(ctx, raw, ConfigMapKey(path.Base(r.URL.Path)), body, r.Method == http.MethodPatch)
	})
}

// write reads the ConfigMap under key, makes the new one (body, or body
// merged into it when patch is set), records the write in its
// managedFields and writes it back unless it changed since the read.
func (cw *configMapWriter) write(ctx context.Context, raw *clientv3.Client, key string, body []byte, patch bool) (int, []byte, error) {
	got, err := raw.Get(ctx, key)
	if err != nil {
		return http.StatusInternalServerError, nil, err
	}
	if len(got.Kvs) == 0 {
		return http.StatusNotFound, nil, fmt.Errorf("%s not found", key)
	}
	stored := got.Kvs[0].Value
	live := &corev1.ConfigMap{}
	if err := json.Unmarshal(stored, live); err != nil {
		return http.StatusInternalServerError, nil, fmt.Errorf("%s: %w", key, err)
	}
	if patch {
		if body, err = strategicpatch.ApplyJSON(stored, body, cw.patch, strategicpatch.Options{}); err != nil {
			return http.StatusUnprocessableEntity, nil, err
		}
	}
	// client-go sends a PUT's object as protobuf, a patch is JSON.
	obj := &corev1.ConfigMap{}
	if _, _, err := clientscheme.Codecs.UniversalDeserializer().Decode(body, nil, obj); err != nil {
		return http.StatusBadRequest, nil, err
	}
	// The stored object's resourceVersion is its etcd revision, which an
	// unconditional write takes on (as kube-apiserver's store does).
	live.ResourceVersion = strconv.FormatInt(got.Kvs[0].ModRevision, 10)
	if obj.ResourceVersion == "" {
		obj.ResourceVersion = live.ResourceVersion
	}
	recorded := cw.fm.Update(live, obj, "strata-bench")
	// The field manager keeps an object it cannot record as it was, so a
	// floor it could not record for would be cheaper than it should be;
	// the first write, to an object without managedFields, shows it.
	if m, err := meta.Accessor(recorded); err != nil || len(m.GetManagedFields()) == 0 {
		return http.StatusInternalServerError, nil, fmt.Errorf("%s: the field manager recorded nothing", key)
	}
	out, err := validated(ctx, configMaps, layout.Namespace, recorded, live)
	if err != nil {
		return http.StatusUnprocessableEntity, nil, err
	}
	if code, err := casPut(ctx, raw, key, got.Kvs[0].ModRevision, out); err != nil {
		return code, nil, err
	}
	return http.StatusOK, out, nil
}

// create decodes a POSTed ConfigMap, lets the field manager record it as
// kube-apiserver's create handler does (against a new, empty object of the
// kind), runs upstream's strategy and validation on it and puts it under
// a new key: the least a create costs a server that keeps managedFields
// and validates, without admission, authorization or watch cache.
func (cw *configMapWriter) create(ctx context.Context, raw *clientv3.Client, body []byte) (int, []byte, error) {
	obj := &corev1.ConfigMap{}
	if _, _, err := clientscheme.Codecs.UniversalDeserializer().Decode(body, nil, obj); err != nil {
		return http.StatusBadRequest, nil, err
	}
	recorded := cw.fm.Update(&corev1.ConfigMap{}, obj, "strata-bench")
	if m, err := meta.Accessor(recorded); err != nil || len(m.GetManagedFields()) == 0 {
		return http.StatusInternalServerError, nil, fmt.Errorf("%s: the field manager recorded nothing", obj.Name)
	}
	out, err := validated(ctx, configMaps, FMNamespace, recorded, nil)
	if err != nil {
		return http.StatusUnprocessableEntity, nil, err
	}
	if err := layout.PutIfAbsent(ctx, raw, layout.RawPrefix+"floor-fm/"+obj.Name, string(out)); err != nil {
		return http.StatusConflict, nil, err
	}
	return http.StatusCreated, out, nil
}

// serveFloorWrite reads a write floor's request body, lets write make the
// object, and answers it with write's status (or write's error).
func serveFloorWrite(w http.ResponseWriter, r *http.Request, write func(context.Context, []byte) (int, []byte, error)) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	status, out, err := write(r.Context(), body)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(out)
}

// casPut puts out under key if its mod revision is still modRev (0: the
// key does not exist), and says which status answers a failure.
func casPut(ctx context.Context, raw *clientv3.Client, key string, modRev int64, out []byte) (int, error) {
	resp, err := raw.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(out))).Commit()
	switch {
	case err != nil:
		return http.StatusInternalServerError, err
	case !resp.Succeeded:
		return http.StatusConflict, fmt.Errorf("%s changed since it was read", key)
	}
	return http.StatusOK, nil
}
