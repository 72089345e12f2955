package apiserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestListBodyChunks: a list written in chunks is the same JSON as the
// list encoded whole (plus the newline), whatever the items' sizes, and no
// chunk is larger than the buffer unless it is one oversized item.
func TestListBodyChunks(t *testing.T) {
	item := func(n int) []byte { return []byte(`{"v":"` + strings.Repeat("x", n) + `"}`) }
	remaining := int64(3)
	for _, tc := range []struct {
		name  string
		items [][]byte
	}{
		{"empty", nil},
		{"small items", [][]byte{item(1), item(2), item(3), item(4), item(5)}},
		{"an item larger than the buffer", [][]byte{item(10), item(400), item(10), item(30)}},
		{"items filling the buffer exactly", [][]byte{item(28), item(151), item(150), item(149)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &listBody{Kind: "ConfigMapList", APIVersion: "v1", Items: tc.items,
				Metadata: metav1.ListMeta{ResourceVersion: "12", Continue: "c", RemainingItemCount: &remaining}}
			whole, err := encodeJSON(body)
			if err != nil {
				t.Fatal(err)
			}
			var decoded map[string]any
			if err := json.Unmarshal(whole, &decoded); err != nil {
				t.Fatalf("whole list is not JSON: %v\n%s", err, whole)
			}
			const bufBytes = 160 // more than the list's head
			var chunked bytes.Buffer
			err = body.writeTo(func(p []byte) error {
				if len(p) > bufBytes && !bytes.HasPrefix(p, []byte(`{"v":`)) {
					t.Errorf("chunk of %d bytes from a %d-byte buffer: %s", len(p), bufBytes, p)
				}
				chunked.Write(p)
				return nil
			}, make([]byte, 0, bufBytes))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := chunked.String(), string(whole)+"\n"; got != want {
				t.Errorf("chunked:\n%s\nwhole:\n%s", got, want)
			}
		})
	}
}
