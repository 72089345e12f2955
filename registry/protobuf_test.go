package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func protobufOf(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobufCodec.Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withoutSystemFields drops what differs between two creates of one body.
func withoutSystemFields(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	c.SetUID("")
	c.SetCreationTimestamp(metav1.Time{})
	return c.Object
}

// TestDecodeProtobuf: a protobuf body, decoded straight into the typed
// object, gives the object the same body as JSON gives, defaults included.
func TestDecodeProtobuf(t *testing.T) {
	k := kindOf(t, "deployments")
	var d appsv1.Deployment
	if err := json.Unmarshal([]byte(deploymentBody), &d); err != nil {
		t.Fatal(err)
	}
	ctx := k.Context(context.Background(), "default", "create", "", nil)
	obj, warnings, err := k.DecodeProtobuf(protobufOf(t, &d), FieldValidationStrict)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("DecodeProtobuf: %v, warnings %q", err, warnings)
	}
	fromProtobuf, err := k.PrepareCreate(ctx, obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := create(t, k, deploymentBody)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := withoutSystemFields(fromProtobuf.Unstructured), withoutSystemFields(fromJSON); !reflect.DeepEqual(got, want) {
		t.Errorf("from protobuf:\n%v\nfrom JSON:\n%v", got, want)
	}
}

// TestDecodeProtobufRejects: another kind is refused in the words the
// JSON path uses, and bytes that are not protobuf are a 400.
func TestDecodeProtobufRejects(t *testing.T) {
	k := kindOf(t, "deployments")
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	_, _, err := k.DecodeProtobuf(protobufOf(t, cm), FieldValidationStrict)
	want := `ConfigMap in version "v1" cannot be handled as a Deployment: converting (v1.ConfigMap) to (apps.Deployment): unknown conversion`
	if !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("ConfigMap as a Deployment: %v, want 400 %q", err, want)
	}
	_, _, err = k.DecodeProtobuf([]byte("k8s\x00garbage"), FieldValidationStrict)
	if !apierrors.IsBadRequest(err) {
		t.Errorf("garbage: %v, want 400", err)
	}
}

// FuzzDecodeProtobuf feeds arbitrary protobuf bodies to a built-in kind's
// decoding and create preparation: errors are fine, panics are not, and a
// decoded object is always the kind's own type.
func FuzzDecodeProtobuf(f *testing.F) {
	var d appsv1.Deployment
	if err := json.Unmarshal([]byte(deploymentBody), &d); err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := protobufCodec.Encode(&d, &b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	b.Reset()
	if err := protobufCodec.Encode(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, &b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte("k8s\x00"))
	f.Add([]byte("k8s\x00\x0a\x02\x0a\x00\x12\x00"))
	k := kindOf(f, "deployments")
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, _, err := k.DecodeProtobuf(body, FieldValidationStrict)
		if err != nil {
			return
		}
		if _, ok := obj.(*appsv1.Deployment); !ok {
			t.Fatalf("decoded a %T, want a Deployment", obj)
		}
		_, _ = k.PrepareCreate(k.Context(context.Background(), "default", "create", "", nil), obj, nil)
	})
}

// TestProtobufMessageEveryKind: every built-in kind has a protobuf
// message, and ProtobufMessage gives the bytes the upstream serializer
// wraps in its envelope (for the Deployment with defaults, and for each
// kind an object with metadata only).
func TestProtobufMessageEveryKind(t *testing.T) {
	for _, k := range Builtin() {
		if !k.HasProtobuf() {
			t.Errorf("%s: no protobuf", k.Resource)
			continue
		}
		content := map[string]any{"apiVersion": k.GVK.GroupVersion().String(), "kind": k.GVK.Kind,
			"metadata": map[string]any{"name": "x", "namespace": "ns", "resourceVersion": "7", "labels": map[string]any{"a": "b"}}}
		if k.Resource == "deployments" {
			if err := json.Unmarshal([]byte(deploymentBody), &content); err != nil {
				t.Fatal(err)
			}
		}
		msg, err := k.ProtobufMessage(content)
		if err != nil {
			t.Errorf("%s: %v", k.Resource, err)
			continue
		}
		typed, err := toTyped(&unstructured.Unstructured{Object: content}, k.GVK)
		if err != nil {
			t.Fatal(err)
		}
		typed.GetObjectKind().SetGroupVersionKind(k.GVK)
		var unk runtime.Unknown
		if err := unk.Unmarshal(bytes.TrimPrefix(protobufOf(t, typed), []byte("k8s\x00"))); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(unk.Raw, msg) || unk.Kind != k.GVK.Kind || unk.APIVersion != k.GVK.GroupVersion().String() {
			t.Errorf("%s: message\n% x\nwant\n% x (envelope %s %s)", k.Resource, msg, unk.Raw, unk.APIVersion, unk.Kind)
		}
	}
}
