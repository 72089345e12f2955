package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestUnsafeDeleteOfUndecodableObject: an object whose stored bytes do
// not decode is answered as kube-apiserver answers it (get and delete: 500
// naming its key; list: 500 StorageReadError), and only a delete with
// ignoreStoreReadErrorWithClusterBreakingPotential removes it; the option
// is refused on a collection, with other options, and on an object that
// decodes.
func TestUnsafeDeleteOfUndecodableObject(t *testing.T) {
	ts := newTestServer(t)
	for _, name := range []string{"undecodable", "fine"} {
		if code, body := ts.send(t, "POST", cmPath, "application/json", []byte(`{"metadata":{"name":"`+name+`"}}`)); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	key, fineKey := etcdKeyOf(t, "/configmaps/default/undecodable"), etcdKeyOf(t, "/configmaps/default/fine")
	put, err := testEtcd.Put(context.Background(), key, "garbage")
	if err != nil {
		t.Fatal(err)
	}
	corrupt := fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: json: invalid character 'g' looking for beginning of value",
		key, put.Header.Revision)
	readErr := apierrors.NewInternalError(fmt.Errorf("%s", corrupt)).ErrStatus
	listErr := metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonStoreReadError,
		Message: "failed to read one or more configmaps from the storage: " + corrupt,
		Details: &metav1.StatusDetails{Kind: "configmaps", Name: "list", Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeUnexpectedServerResponse, Field: key, Message: corrupt}}}}
	invalid := func(detail string) metav1.Status {
		return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "DeleteOptions"}, "", field.ErrorList{
			field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true, detail)}).ErrStatus
	}
	deleted := metav1.Status{Status: metav1.StatusSuccess, Code: 200, Details: &metav1.StatusDetails{Name: "undecodable", Kind: "ConfigMap"}}
	decodable := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "fine", fmt.Errorf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage", fineKey)).ErrStatus
	const unsafe = "?ignoreStoreReadErrorWithClusterBreakingPotential=true"
	obj := cmPath + "/undecodable"
	for _, tt := range []struct {
		method, path, body string
		want               metav1.Status
	}{
		{"GET", obj, "", readErr},
		{"GET", cmPath, "", listErr},
		{"DELETE", obj, "", readErr},
		{"DELETE", obj, `{"gracePeriodSeconds":0,"ignoreStoreReadErrorWithClusterBreakingPotential":true}`,
			invalid("cannot be set together with .gracePeriodSeconds")},
		{"DELETE", cmPath + unsafe, "", invalid("is not allowed with DELETECOLLECTION, try again after removing the option")},
		{"DELETE", obj + unsafe + "&dryRun=All", "", deleted},
		{"GET", obj, "", readErr}, // the dry run kept it
		{"DELETE", cmPath + "/fine" + unsafe, "", decodable},
		{"DELETE", obj, `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`, deleted},
		{"GET", obj, "", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "undecodable").ErrStatus},
		{"DELETE", obj + unsafe, "", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "undecodable").ErrStatus},
	} {
		code, out := ts.send(t, tt.method, tt.path, "application/json", []byte(tt.body))
		var got metav1.Status
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s %s: %d %s", tt.method, tt.path, code, out)
		}
		tt.want.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		if diff := cmp.Diff(tt.want, got); code != int(tt.want.Code) || diff != "" {
			t.Errorf("%s %s %s: %d, (-want +got):\n%s", tt.method, tt.path, tt.body, code, diff)
		}
	}
	if code, out := ts.send(t, http.MethodGet, cmPath, "", nil); code != 200 || !strings.Contains(string(out), `"name":"fine"`) {
		t.Errorf("list after the unsafe delete: %d %s", code, out)
	}
}

// etcdKeyOf finds the one key under the test servers' prefixes that ends
// in suffix.
func etcdKeyOf(t *testing.T, suffix string) string {
	t.Helper()
	resp, err := testEtcd.Get(context.Background(), "/test-", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, kv := range resp.Kvs {
		if strings.HasSuffix(string(kv.Key), suffix) {
			found = append(found, string(kv.Key))
		}
	}
	if len(found) != 1 {
		t.Fatalf("keys ending in %s: %v, want one", suffix, found)
	}
	return found[0]
}

// TestUnsafeDeleteAuthorization: the unsafe deletion also needs the verb
// unsafe-delete-ignore-read-errors on the object, as on kube-apiserver;
// without it the answer is kube-apiserver's 403 and nothing is deleted.
func TestUnsafeDeleteAuthorization(t *testing.T) {
	var asked []authorizer.Attributes
	ts := newTestServer(t, func(c *Config) {
		c.Authorizer = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			asked = append(asked, a)
			return authorizer.DecisionNoOpinion, "no RBAC policy matched", nil
		})
	})
	if code, body := ts.send(t, "POST", cmPath, "application/json", []byte(`{"metadata":{"name":"guarded"}}`)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if _, err := testEtcd.Put(context.Background(), etcdKeyOf(t, "/configmaps/default/guarded"), "garbage"); err != nil {
		t.Fatal(err)
	}
	code, out := ts.send(t, "DELETE", cmPath+"/guarded?ignoreStoreReadErrorWithClusterBreakingPotential=true", "", nil)
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"guarded\" is forbidden: not permitted to do \"unsafe-delete-ignore-read-errors\", reason: no RBAC policy matched","reason":"Forbidden","details":{"name":"guarded","kind":"configmaps"},"code":403}` + "\n"
	if code != 403 || string(out) != want {
		t.Errorf("unsafe delete without the verb: %d\n%s\nwant 403\n%s", code, out, want)
	}
	wantAsked := authorizer.AttributesRecord{Verb: "unsafe-delete-ignore-read-errors", Namespace: "default", Name: "guarded",
		APIVersion: "v1", Resource: "configmaps", ResourceRequest: true}
	if len(asked) != 1 || !cmp.Equal(asked[0], authorizer.Attributes(wantAsked)) {
		t.Errorf("authorizer asked %+v, want [%+v]", asked, wantAsked)
	}
	if code, _ := ts.send(t, "GET", cmPath+"/guarded", "", nil); code != 500 {
		t.Errorf("GET after the refused delete: %d, want the corrupt object's 500", code)
	}
}
