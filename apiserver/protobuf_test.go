package apiserver

// Tests of protobuf responses: the negotiation, kube-apiserver's bytes for
// objects, lists, watch events and errors, and the JSON-only custom
// resources. protobuf_client_test.go drives client-go over protobuf.

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/stratadev/strata/registry"
)

// notAcceptableMessage is kube-apiserver's 406 for a request whose Accept
// header names no media type it answers in.
const notAcceptableMessage = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"

const (
	acceptProtobuf    = "application/vnd.kubernetes.protobuf"
	acceptClientGo    = "application/vnd.kubernetes.protobuf,application/json"
	acceptTableJSON   = "application/json;as=Table;v=v1;g=meta.k8s.io"
	acceptMetadataAny = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
		"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)

// TestNegotiate: the form and encoding kube-apiserver picks for the Accept
// headers clients send, for a built-in kind (protobuf) and a custom one,
// negotiated and then remembered (each case runs twice).
func TestNegotiate(t *testing.T) {
	watch406 := "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
	tests := []struct {
		name            string
		accept          string
		protobuf, watch bool
		want            media
		err             string // the 406 message, when one is expected
	}{
		{name: "no Accept", protobuf: true, want: media{}},
		{name: "protobuf", accept: acceptProtobuf, protobuf: true, want: media{enc: encodingProtobuf}},
		{name: "client-go", accept: acceptClientGo, protobuf: true, want: media{enc: encodingProtobuf}},
		{name: "client-go, custom kind", accept: acceptClientGo, want: media{enc: encodingJSON}},
		{name: "protobuf only, custom kind", accept: acceptProtobuf, err: notAcceptableMessage},
		{name: "protobuf watch", accept: acceptProtobuf + ";stream=watch", protobuf: true, watch: true, want: media{enc: encodingProtobuf}},
		{name: "protobuf watch, custom kind", accept: acceptProtobuf + ";stream=watch", watch: true, err: notAcceptableMessage},
		{name: "quality prefers JSON", accept: "application/vnd.kubernetes.protobuf;q=0.5,application/json", protobuf: true, want: media{enc: encodingJSON}},
		{name: "any", accept: "*/*", protobuf: true, want: media{enc: encodingJSON}},
		{name: "YAML", accept: "application/yaml", protobuf: true, want: media{enc: encodingYAML}},
		{name: "YAML watch", accept: "application/yaml", protobuf: true, watch: true, err: watch406},
		{name: "Table", accept: acceptTableJSON, protobuf: true, want: media{form: outputTable}},
		{name: "Table in protobuf, else JSON", accept: acceptProtobuf + ";as=Table;v=v1;g=meta.k8s.io," + acceptTableJSON,
			protobuf: true, want: media{form: outputTable}},
		{name: "Table in protobuf only", accept: acceptProtobuf + ";as=Table;v=v1;g=meta.k8s.io", protobuf: true, err: notAcceptableMessage},
		{name: "metadata client, custom kind", accept: acceptMetadataAny, want: media{form: outputPartial, enc: encodingProtobuf}},
		{name: "Table of another group", accept: "application/json;as=Table;v=v1;g=example.com", protobuf: true, err: notAcceptableMessage},
		{name: "CBOR", accept: "application/cbor", protobuf: true, err: notAcceptableMessage},
	}
	for _, tc := range append(tests, tests...) {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			got, err := negotiate(r, tc.protobuf, tc.watch)
			if tc.err != "" {
				st := statusOf(err)
				if err == nil || st.Code != http.StatusNotAcceptable || st.Reason != metav1.StatusReasonNotAcceptable || st.Message != tc.err {
					t.Fatalf("negotiate: %v, want 406 %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("negotiate = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestNegotiationsBounded: past maxNegotiations distinct Accept values,
// and for values longer than maxNegotiationAccept, the outcome is
// negotiated each time and not remembered, and is still right.
func TestNegotiationsBounded(t *testing.T) {
	accepts := []string{acceptProtobuf + ";q=0.9," + strings.Repeat("x", maxNegotiationAccept) + "/y"}
	for i := range maxNegotiations + 10 { // distinct values, more than are remembered
		accepts = append(accepts, fmt.Sprintf("application/json;q=0.%d,application/vnd.kubernetes.protobuf", i+1))
	}
	for _, accept := range accepts {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("Accept", accept)
		if got, err := negotiate(r, true, false); err != nil || got != (media{enc: encodingProtobuf}) {
			t.Fatalf("negotiate(%q) = %+v, %v; want protobuf", accept, got, err)
		}
	}
	n := 0
	negotiations.Range(func(k, _ any) bool {
		if len(k.(negotiationKey).accept) > maxNegotiationAccept {
			t.Errorf("remembered a value of %d bytes", len(k.(negotiationKey).accept))
		}
		n++
		return true
	})
	if n > maxNegotiations {
		t.Errorf("%d negotiations remembered, want at most %d", n, maxNegotiations)
	}
}

// protobufOf is the upstream serializer's encoding of obj.
func protobufOf(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	data, err := encodeProtobuf(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// decodeProtobuf decodes a protobuf answer into into and returns the kind
// its envelope names.
func decodeProtobuf(t testing.TB, data []byte, into runtime.Object) string {
	t.Helper()
	_, gvk, err := registry.ProtobufCodec.Decode(data, nil, into)
	if err != nil {
		t.Fatalf("decoding protobuf: %v (% x)", err, data[:min(len(data), 64)])
	}
	return gvk.Kind
}

// TestProtobufBytes: gets, lists (one written in chunks) and watch events
// are byte for byte what k8s.io/apimachinery's protobuf serializer writes
// for the objects the JSON path returns.
func TestProtobufBytes(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	jc, jseen := jsonClient(t, ts)
	cms := jc.CoreV1().ConfigMaps("default")
	big := strings.Repeat("x", 3000)
	for i := range 40 { // about 120 KB: the list goes in several chunks
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%02d", i), map[string]string{"big": big, "i": fmt.Sprint(i)}, nil)
	}
	if _, err := jc.AppsV1().Deployments("default").Create(ctx, newDeployment("web", "nginx"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Get(ctx, "cm-07", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	deploy, err := jc.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deploy.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
	cmList, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmList.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}
	deployList, err := jc.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deployList.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DeploymentList"}
	scale, err := jc.AppsV1().Deployments("default").GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.TypeMeta = metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"}
	jseen.checkAll(t, runtime.ContentTypeJSON)

	tests := []struct {
		name, path, accept string
		want               []byte
	}{
		{"configmap", "/api/v1/namespaces/default/configmaps/cm-07", acceptProtobuf, protobufOf(t, cm)},
		{"deployment, client-go's Accept", "/apis/apps/v1/namespaces/default/deployments/web", acceptClientGo, protobufOf(t, deploy)},
		{"configmap list in chunks", "/api/v1/namespaces/default/configmaps", acceptProtobuf, protobufOf(t, cmList)},
		{"deployment list", "/apis/apps/v1/namespaces/default/deployments", acceptClientGo, protobufOf(t, deployList)},
		{"scale", "/apis/apps/v1/namespaces/default/deployments/web/scale", acceptClientGo, protobufOf(t, scale)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 2 { // encoded, then from the cache
				res := rawCall(t, ts, "GET", tc.path, map[string]string{"Accept": tc.accept}, nil)
				if res.code != http.StatusOK || res.header.Get("Content-Type") != runtime.ContentTypeProtobuf {
					t.Fatalf("round %d: %d %q: %s", round, res.code, res.header.Get("Content-Type"), res.body)
				}
				if string(res.body) != string(tc.want) {
					t.Fatalf("round %d: got\n% x\nwant\n% x", round, res.body[:min(len(res.body), 200)], tc.want[:min(len(tc.want), 200)])
				}
			}
		})
	}

	t.Run("watch", func(t *testing.T) {
		res := rawCall(t, ts, "GET", "/apis/apps/v1/namespaces/default/deployments?watch=1&resourceVersion=0&timeoutSeconds=1",
			map[string]string{"Accept": acceptProtobuf + ";stream=watch"}, nil)
		if ct := res.header.Get("Content-Type"); res.code != http.StatusOK || ct != "application/vnd.kubernetes.protobuf;stream=watch" {
			t.Fatalf("%d %q: %s", res.code, ct, res.body)
		}
		ev := metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: protobufOf(t, deploy)}}
		msg, err := ev.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want := binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
		want = append(want, msg...)
		if string(res.body) != string(want) {
			t.Fatalf("watch stream:\n% x\nwant one ADDED frame:\n% x", res.body, want)
		}
	})
}

// TestProtobufErrors: errors are a protobuf Status when the client takes
// protobuf, as kube-apiserver writes them, also the 406 of a custom
// resource; a custom resource is JSON when the client also takes JSON.
func TestProtobufErrors(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	if _, err := widgets(ts).Create(context.Background(), widget("w1", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := "/api/v1/namespaces/default/configmaps"
	ws := "/apis/example.com/v1/namespaces/default/widgets"
	tests := []struct {
		name, method, path, accept string
		code                       int
		contentType                string
		message                    string // of the Status
	}{
		{"missing configmap", "GET", cms + "/nope", acceptProtobuf, 404, runtime.ContentTypeProtobuf, `configmaps "nope" not found`},
		{"missing configmap, client-go", "DELETE", cms + "/nope", acceptClientGo, 404, runtime.ContentTypeProtobuf, `configmaps "nope" not found`},
		{"bad list options", "GET", cms + "?resourceVersionMatch=Exact", acceptProtobuf, 422, runtime.ContentTypeProtobuf,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{"widget in protobuf", "GET", ws + "/w1", acceptProtobuf, 406, runtime.ContentTypeProtobuf, notAcceptableMessage},
		{"widgets in protobuf", "GET", ws, acceptProtobuf, 406, runtime.ContentTypeProtobuf, notAcceptableMessage},
		{"widget watch in protobuf", "GET", ws + "?watch=1", acceptProtobuf + ";stream=watch", 406, runtime.ContentTypeProtobuf, notAcceptableMessage},
		{"widget delete in protobuf", "DELETE", ws + "/w1", acceptProtobuf, 406, runtime.ContentTypeProtobuf, notAcceptableMessage},
		{"missing widget, client-go", "GET", ws + "/nope", acceptClientGo, 404, runtime.ContentTypeProtobuf, `widgets.example.com "nope" not found`},
		{"YAML watch", "GET", cms + "?watch=1", "application/yaml", 406, runtime.ContentTypeYAML,
			"only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"},
		{"Table in protobuf", "GET", cms, acceptProtobuf + ";as=Table;v=v1;g=meta.k8s.io", 406, runtime.ContentTypeJSON, notAcceptableMessage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, tc.method, tc.path, map[string]string{"Accept": tc.accept}, nil)
			if res.code != tc.code || res.header.Get("Content-Type") != tc.contentType {
				t.Fatalf("%d %q, want %d %q: %s", res.code, res.header.Get("Content-Type"), tc.code, tc.contentType, res.body)
			}
			var st metav1.Status
			if tc.contentType == runtime.ContentTypeProtobuf {
				st.Kind = decodeProtobuf(t, res.body, &st)
			} else if err := yaml.Unmarshal(res.body, &st); err != nil {
				t.Fatal(err)
			}
			if st.Kind != "Status" || int(st.Code) != tc.code || st.Message != tc.message {
				t.Errorf("Status %+v, want code %d message %q", st, tc.code, tc.message)
			}
		})
	}

	t.Run("widget for client-go", func(t *testing.T) {
		res := rawCall(t, ts, "GET", ws+"/w1", map[string]string{"Accept": acceptClientGo}, nil)
		if res.code != http.StatusOK || res.header.Get("Content-Type") != runtime.ContentTypeJSON {
			t.Fatalf("%d %q: %s", res.code, res.header.Get("Content-Type"), res.body)
		}
	})
	t.Run("widget metadata in protobuf", func(t *testing.T) {
		res := rawCall(t, ts, "GET", ws, map[string]string{"Accept": acceptMetadataAny}, nil)
		if res.code != http.StatusOK || res.header.Get("Content-Type") != runtime.ContentTypeProtobuf {
			t.Fatalf("%d %q: %s", res.code, res.header.Get("Content-Type"), res.body)
		}
		var list metav1.PartialObjectMetadataList
		kind := decodeProtobuf(t, res.body, &list)
		if len(list.Items) != 1 || list.Items[0].Name != "w1" || kind != "PartialObjectMetadataList" {
			t.Errorf("got %+v", list)
		}
	})
}

// TestProtobufWrites: creates, updates, patches and deletes answer in
// protobuf with the object the JSON path answers.
func TestProtobufWrites(t *testing.T) {
	ts := newTestServer(t)
	cms := "/api/v1/namespaces/default/configmaps"
	body := protobufOf(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "w"}, Data: map[string]string{"a": "1"}})
	proto := map[string]string{"Accept": acceptProtobuf, "Content-Type": acceptProtobuf}
	res := rawCall(t, ts, "POST", cms, proto, body)
	if res.code != http.StatusCreated || res.header.Get("Content-Type") != runtime.ContentTypeProtobuf {
		t.Fatalf("create: %d %q: %s", res.code, res.header.Get("Content-Type"), res.body)
	}
	var created corev1.ConfigMap
	decodeProtobuf(t, res.body, &created)
	res = rawCall(t, ts, "PATCH", cms+"/w", map[string]string{"Accept": acceptProtobuf,
		"Content-Type": "application/merge-patch+json"}, []byte(`{"data":{"b":"2"}}`))
	if res.code != http.StatusOK {
		t.Fatalf("patch: %d: %s", res.code, res.body)
	}
	var patched corev1.ConfigMap
	decodeProtobuf(t, res.body, &patched)
	jc, _ := jsonClient(t, ts)
	current, err := jc.CoreV1().ConfigMaps("default").Get(context.Background(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.TypeMeta = patched.TypeMeta
	if diff := cmp.Diff(current, &patched); diff != "" {
		t.Errorf("patch answer differs from a JSON get (-json +protobuf):\n%s", diff)
	}
	// A dry run answers the stored resourceVersion with other content: the
	// answer is not the cached message of the stored object.
	rawCall(t, ts, "GET", cms+"/w", map[string]string{"Accept": acceptProtobuf}, nil)
	res = rawCall(t, ts, "PATCH", cms+"/w?dryRun=All", map[string]string{"Accept": acceptProtobuf,
		"Content-Type": "application/merge-patch+json"}, []byte(`{"data":{"b":"dry"}}`))
	var dry corev1.ConfigMap
	decodeProtobuf(t, res.body, &dry)
	if dry.Data["b"] != "dry" || dry.ResourceVersion != patched.ResourceVersion {
		t.Errorf("dry-run patch answered data %v at %s, want b=dry at %s", dry.Data, dry.ResourceVersion, patched.ResourceVersion)
	}
	res = rawCall(t, ts, "DELETE", cms+"/w", map[string]string{"Accept": acceptProtobuf}, nil)
	var st metav1.Status
	if res.code != http.StatusOK {
		t.Fatalf("delete: %d: %s", res.code, res.body)
	}
	decodeProtobuf(t, res.body, &st)
	if st.Status != metav1.StatusSuccess || st.Details == nil || st.Details.Name != "w" || st.Details.UID != created.UID {
		t.Errorf("delete answered %+v", st)
	}
}

// FuzzNegotiate feeds arbitrary Accept headers to the negotiation: it
// never panics, and it either picks a form and encoding or refuses with
// kube-apiserver's 406; a protobuf answer is never picked for a kind
// without protobuf unless transformed to PartialObjectMetadata, and never
// for a Table.
func FuzzNegotiate(f *testing.F) {
	for _, seed := range []string{"", acceptProtobuf, acceptClientGo, acceptTableJSON, acceptMetadataAny,
		"*/*;q=0.1,application/yaml", "application/vnd.kubernetes.protobuf;stream=watch", "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
		"application/*;q=0", ";;,,=", "application/json;sv=v1;pretty=1", "text/html, application/xhtml+xml"} {
		f.Add(seed, true, false)
		f.Add(seed, false, true)
	}
	f.Fuzz(func(t *testing.T, accept string, protobuf, watch bool) {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("Accept", accept)
		m, err := negotiate(r, protobuf, watch)
		if err != nil {
			if st := statusOf(err); st.Code != http.StatusNotAcceptable || !strings.HasPrefix(st.Message, "only the following media types are accepted: ") {
				t.Fatalf("negotiate(%q): %v", accept, err)
			}
			return
		}
		if m.enc == encodingProtobuf && (m.form == outputTable || (!protobuf && m.form != outputPartial)) {
			t.Fatalf("negotiate(%q, protobuf %v) = %+v", accept, protobuf, m)
		}
		if watch && m.enc == encodingYAML {
			t.Fatalf("negotiate(%q) picked YAML for a watch", accept)
		}
		_ = plainEncoding(r)
	})
}
