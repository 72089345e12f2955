package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
	"k8s.io/utils/ptr"
)

func TestListPager(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("cm-%d", i)
		mustCreateConfigMap(t, cms, name, nil, nil)
		want = append(want, name)
	}
	var calls []metav1.ListOptions
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		calls = append(calls, opts)
		return cms.List(ctx, opts)
	}))
	p.PageSize = 2
	var got []string
	if err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		got = append(got, metaOf(t, obj).GetName())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if len(calls) != 4 {
		t.Fatalf("%d pages, want 4", len(calls))
	}
	for i, c := range calls {
		if c.Limit != 2 || (i == 0) != (c.Continue == "") {
			t.Errorf("page %d: limit %d continue %q", i, c.Limit, c.Continue)
		}
	}
	// pager.List gathers the pages into one list.
	obj, paginated, err := p.List(ctx, metav1.ListOptions{})
	if err != nil || !paginated {
		t.Fatalf("List: %v, paginated %v", err, paginated)
	}
	if diff := cmp.Diff(want, listNames(t, obj)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func TestListLimitContinue(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	for i := range 5 {
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%d", i), nil, map[string]string{"all": "yes"})
	}
	type page struct {
		names     []string
		more      bool
		remaining *int64
	}
	pageOf := func(l *corev1.ConfigMapList) page {
		return page{listNames(t, l), l.Continue != "", l.RemainingItemCount}
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-0", "cm-1"}, true, ptr.To[int64](3)}, pageOf(first), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("page 1 (-want +got):\n%s", diff)
	}
	// Writes between pages do not show: every page is read at the first
	// page's revision.
	mustCreateConfigMap(t, cms, "cm-9", nil, nil)
	if err := cms.Delete(ctx, "cm-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	second, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-2", "cm-3"}, true, ptr.To[int64](1)}, pageOf(second), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	third, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: second.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-4"}, false, nil}, pageOf(third), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("page 3 (-want +got):\n%s", diff)
	}
	for i, l := range []*corev1.ConfigMapList{second, third} {
		if l.ResourceVersion != first.ResourceVersion {
			t.Errorf("page %d resourceVersion %s, want the first page's %s", i+2, l.ResourceVersion, first.ResourceVersion)
		}
	}
	// With a selector: pages are filled, remainingItemCount is not set.
	sel, err := cms.List(ctx, metav1.ListOptions{Limit: 2, LabelSelector: "all=yes"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-0", "cm-1"}, true, nil}, pageOf(sel), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("selector page 1 (-want +got):\n%s", diff)
	}
	sel2, err := cms.List(ctx, metav1.ListOptions{Limit: 2, LabelSelector: "all=yes", Continue: sel.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cm-3", "cm-4"}, listNames(t, sel2)); diff != "" {
		t.Errorf("selector page 2 (-want +got):\n%s", diff)
	}
	// A limit larger than the list: one page, no continue.
	all, err := cms.List(ctx, metav1.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-0", "cm-1", "cm-3", "cm-4", "cm-9"}, false, nil}, pageOf(all), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("limit 100 (-want +got):\n%s", diff)
	}
}

func TestListResourceVersionMatch(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	v1 := mustCreateConfigMap(t, cms, "v", map[string]string{"n": "1"}, nil)
	upd := v1.DeepCopy()
	upd.Data["n"] = "2"
	v2, err := cms.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    metav1.ListOptions
		wantN   string
		wantRV  string // exact list resourceVersion, when set
		minRV   string // else the list resourceVersion is at least this
		wantLen int
	}{
		// NotOlderThan v2 first, so that the cache is known to be there.
		{name: "NotOlderThan newest", opts: metav1.ListOptions{ResourceVersion: v2.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
		{name: "NotOlderThan older", opts: metav1.ListOptions{ResourceVersion: v1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
		{name: "NotOlderThan 0", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
		{name: "Exact older", opts: metav1.ListOptions{ResourceVersion: v1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantN: "1", wantRV: v1.ResourceVersion, wantLen: 1},
		{name: "Exact newest", opts: metav1.ListOptions{ResourceVersion: v2.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantN: "2", wantRV: v2.ResourceVersion, wantLen: 1},
		{name: "Exact before the object", opts: metav1.ListOptions{ResourceVersion: strconv.FormatInt(rvInt(t, v1.ResourceVersion)-1, 10),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantRV: strconv.FormatInt(rvInt(t, v1.ResourceVersion)-1, 10), wantLen: 0},
		{name: "legacy: RV with limit is exact", opts: metav1.ListOptions{ResourceVersion: v1.ResourceVersion, Limit: 10},
			wantN: "1", wantRV: v1.ResourceVersion, wantLen: 1},
		{name: "unset", opts: metav1.ListOptions{}, wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := cms.List(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tc.wantLen {
				t.Fatalf("items %v, want %d", listNames(t, list), tc.wantLen)
			}
			if tc.wantLen == 1 && list.Items[0].Data["n"] != tc.wantN {
				t.Errorf("n = %q, want %q", list.Items[0].Data["n"], tc.wantN)
			}
			if tc.wantRV != "" && list.ResourceVersion != tc.wantRV {
				t.Errorf("list resourceVersion %s, want %s", list.ResourceVersion, tc.wantRV)
			}
			if tc.minRV != "" && rvInt(t, list.ResourceVersion) < rvInt(t, tc.minRV) {
				t.Errorf("list resourceVersion %s, want at least %s", list.ResourceVersion, tc.minRV)
			}
		})
	}
	// A get at an older resourceVersion is "not older than": the newest.
	got, err := cms.Get(ctx, "v", metav1.GetOptions{ResourceVersion: v1.ResourceVersion})
	if err != nil || got.Data["n"] != "2" {
		t.Errorf("get not older than %s: %v, n=%q", v1.ResourceVersion, err, got.Data["n"])
	}
}

// TestListErrors checks the list option errors of the resourceVersion
// table through raw requests: each answer is a Status.
func TestListErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	for i := range 3 {
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%d", i), nil, nil)
	}
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, page.GetContinue())
	}
	listOptions := func(causes ...metav1.StatusCause) *metav1.StatusDetails {
		return &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: causes}
	}
	forbidden := func(field, detail string) metav1.StatusCause {
		return metav1.StatusCause{Type: metav1.CauseType("FieldValueForbidden"), Message: "Forbidden: " + detail, Field: field}
	}
	const path = "/api/v1/namespaces/default/configmaps"
	tests := []struct {
		name  string
		query string
		want  statusWant
	}{
		{"NotOlderThan without resourceVersion", "resourceVersionMatch=NotOlderThan", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`,
			details: listOptions(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))}},
		{"Exact without resourceVersion", "resourceVersionMatch=Exact", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`,
			details: listOptions(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))}},
		{"Exact at 0", "resourceVersion=0&resourceVersionMatch=Exact", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`,
			details: listOptions(forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))}},
		{"unsupported match", "resourceVersion=1&resourceVersionMatch=Bogus", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`,
			details: listOptions(metav1.StatusCause{Type: metav1.CauseTypeFieldValueNotSupported,
				Message: `Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`, Field: "resourceVersionMatch"})}},
		{"match with continue", "resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=" + page.Continue, statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`,
			details: listOptions(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))}},
		{"sendInitialEvents on a list", "sendInitialEvents=true", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`,
			details: listOptions(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))}},
		{"resourceVersion with continue", "resourceVersion=" + page.ResourceVersion + "&continue=" + page.Continue, statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "specifying resource version is not allowed when using continue"}},
		{"malformed continue", "continue=!!!", statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"}},
		{"continue that is base64 of garbage", "continue=" + "Z2FyYmFnZQ", statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "invalid continue token: continue key is not valid: invalid character 'g' looking for beginning of value"}},
		{"non-integer resourceVersion", "resourceVersion=abc", statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
			message: `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`}},
		{"malformed label selector", "labelSelector=a+in+(", statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{"unsupported field selector", "fieldSelector=data.foo%3D1", statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: `"data.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`}},
		{"too large resourceVersion", "resourceVersion=999999999&resourceVersionMatch=NotOlderThan", statusWant{
			code: 504, reason: metav1.StatusReasonTimeout, prefix: "Timeout: Too large resource version: 999999999, current: ",
			details: &metav1.StatusDetails{RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{
				Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}}},
		{"too large resourceVersion, legacy", "resourceVersion=999999999", statusWant{
			code: 504, reason: metav1.StatusReasonTimeout, prefix: "Timeout: Too large resource version: 999999999, current: ",
			details: &metav1.StatusDetails{RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{
				Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, http.MethodGet, path+"?"+tc.query, nil, nil)
			if res.code != int(tc.want.code) {
				t.Errorf("HTTP status %d, want %d", res.code, tc.want.code)
			}
			checkStatus(t, parseStatusBody(t, res.body), tc.want)
			if tc.want.code == 504 {
				if got := res.header.Values("Retry-After"); !slices.Equal(got, []string{"1"}) {
					t.Errorf("Retry-After = %q, want [1]", got)
				}
			}
		})
	}
	// The typed client sees the too-large error as a Timeout with a
	// suggested delay.
	// (client-go retries such answers up to 10 times, honouring Retry-After;
	// MaxRetries(0) keeps the test short).
	err = ts.client.CoreV1().RESTClient().Get().Namespace("default").Resource("configmaps").
		Param("resourceVersion", "999999999").Param("resourceVersionMatch", "NotOlderThan").MaxRetries(0).Do(ctx).Error()
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Errorf("typed list at a too large resourceVersion: %v, want Timeout / ResourceVersionTooLarge", err)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 1 {
		t.Errorf("SuggestsClientDelay = %d %v, want 1 true", d, ok)
	}
}

func TestListSelectors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	mustCreateConfigMap(t, cms, "a", nil, map[string]string{"team": "x", "tier": "web"})
	mustCreateConfigMap(t, cms, "b", nil, map[string]string{"team": "x"})
	mustCreateConfigMap(t, cms, "c", nil, map[string]string{"team": "y"})
	mustCreateConfigMap(t, cms, "d", nil, nil)
	tests := []struct {
		label, field string
		want         []string
	}{
		{"team=x", "", []string{"a", "b"}},
		{"team==x", "", []string{"a", "b"}},
		{"team!=x", "", []string{"c", "d"}},
		{"team in (x,y)", "", []string{"a", "b", "c"}},
		{"team notin (x)", "", []string{"c", "d"}},
		{"tier", "", []string{"a"}},
		{"!tier", "", []string{"b", "c", "d"}},
		{"team=x,tier=web", "", []string{"a"}},
		{"team=z", "", []string{}},
		{"", "metadata.name=b", []string{"b"}},
		{"", "metadata.name!=b", []string{"a", "c", "d"}},
		{"", "metadata.namespace=default", []string{"a", "b", "c", "d"}},
		{"", "metadata.namespace=other", []string{}},
		{"team=x", "metadata.name=a", []string{"a"}},
		{"team=x", "metadata.name=c", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.label+";"+tc.field, func(t *testing.T) {
			for _, limit := range []int64{0, 1} {
				var got []string
				opts := metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field, Limit: limit}
				for {
					list, err := cms.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, listNames(t, list)...)
					if limit > 0 && len(list.Items) > int(limit) {
						t.Errorf("page of %d items with limit %d", len(list.Items), limit)
					}
					if list.Continue == "" {
						break
					}
					opts.Continue = list.Continue
				}
				if got == nil {
					got = []string{}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("limit %d (-want +got):\n%s", limit, diff)
				}
			}
		})
	}
}

func TestListAllNamespaces(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	if _, err := ts.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "one", nil, map[string]string{"k": "v"})
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("other"), "two", nil, map[string]string{"k": "v"})
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("kube-system"), "three", nil, nil)
	nsNames := func(l *corev1.ConfigMapList) []string {
		var out []string
		for _, it := range l.Items {
			out = append(out, it.Namespace+"/"+it.Name)
		}
		return out
	}
	tests := []struct {
		opts metav1.ListOptions
		want []string
	}{
		{metav1.ListOptions{}, []string{"default/one", "kube-system/three", "other/two"}},
		{metav1.ListOptions{LabelSelector: "k=v"}, []string{"default/one", "other/two"}},
		{metav1.ListOptions{FieldSelector: "metadata.namespace=other"}, []string{"other/two"}},
		{metav1.ListOptions{Limit: 2}, []string{"default/one", "kube-system/three"}},
	}
	for _, tc := range tests {
		list, err := ts.client.CoreV1().ConfigMaps("").List(ctx, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, nsNames(list)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.opts, diff)
		}
	}
	// The raw list: kind and apiVersion on the list, not on the items.
	res := rawCall(t, ts, http.MethodGet, "/api/v1/configmaps", nil, nil)
	var raw struct {
		Kind, APIVersion string
		Items            []map[string]any
	}
	if err := json.Unmarshal(res.body, &raw); err != nil || res.code != 200 {
		t.Fatalf("raw list: %d %v\n%s", res.code, err, res.body)
	}
	if raw.Kind != "ConfigMapList" || raw.APIVersion != "v1" || len(raw.Items) != 3 {
		t.Errorf("raw list: kind %q apiVersion %q, %d items", raw.Kind, raw.APIVersion, len(raw.Items))
	}
	for _, it := range raw.Items {
		if _, ok := it["kind"]; ok {
			t.Errorf("item carries kind: %v", it)
		}
	}
}
