package apiserver

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	endpointsdiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/client-go/discovery"
)

// The recording testdata/api-resources-v1.37.tsv is `kubectl api-resources
// -o wide` of kube-apiserver v1.37.2 with its default flags, one row per
// resource with kubectl's columns separated by tabs (kubectl aligns them
// with spaces) and kubectl's default order (group, then name). It was
// derived from the upstream code strata builds with, not captured from a
// running cluster: the enabled group-versions are
// k8s.io/kubernetes/pkg/controlplane.DefaultAPIResourceConfigSource, the
// resources of each those test/integration/etcd/data.go lists for v1.37
// whose feature gates are on by default (pkg/features), and the short names,
// categories and verbs those of each resource's REST storage
// (pkg/registry/<group>/<resource>/storage: ShortNames, Categories, the
// rest interfaces it implements).

// notServed are the rows of the recording strata does not serve, each with
// its reason (docs/server.md, "Known differences").
var notServed = map[string]string{}

// TestAPIResourcesMatchKubeAPIServer compares what `kubectl api-resources
// -o wide` prints of strata (the same discovery call and columns) with the
// recording of kube-apiserver v1.37.
func TestAPIResourcesMatchKubeAPIServer(t *testing.T) {
	ts := newTestServer(t)
	lists, err := ts.client.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recordedAPIResources(t), apiResourceRows(t, lists)); diff != "" {
		t.Errorf("kubectl api-resources (-kube-apiserver v1.37 +strata):\n%s", diff)
	}
}

// apiResourceRows are the rows kubectl api-resources -o wide prints of
// discovery's resource lists, in its order.
func apiResourceRows(t *testing.T, lists []*metav1.APIResourceList) []string {
	t.Helper()
	type row struct{ group, line string }
	var rows []row
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			rows = append(rows, row{gv.Group, strings.Join([]string{r.Name, strings.Join(r.ShortNames, ","),
				list.GroupVersion, strconv.FormatBool(r.Namespaced), r.Kind,
				strings.Join(r.Verbs, ","), strings.Join(r.Categories, ",")}, "\t")})
		}
	}
	// kubectl's default order: group, then name.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].group != rows[j].group {
			return rows[i].group < rows[j].group
		}
		return rows[i].line < rows[j].line
	})
	got := []string{}
	for _, r := range rows {
		got = append(got, r.line)
	}
	return got
}

// TestAggregatedDiscovery: /api and /apis answer aggregated discovery
// (apidiscovery.k8s.io/v2) to clients that ask for it, and what client-go
// reads from it, every version's resources and subresources included, is
// what it reads from the legacy documents.
func TestAggregatedDiscovery(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/api", "/apis"} {
		res := rawCall(t, ts, "GET", path, map[string]string{"Accept": aggregatedContentType + ",application/json"}, nil)
		if res.code != 200 || res.header.Get("Content-Type") != aggregatedContentType {
			t.Errorf("GET %s: %d, Content-Type %q", path, res.code, res.header.Get("Content-Type"))
		}
		res = rawCall(t, ts, "GET", path, map[string]string{"Accept": "application/json"}, nil)
		if res.code != 200 || res.header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s as JSON: %d, Content-Type %q", path, res.code, res.header.Get("Content-Type"))
		}
	}
	aggregated := discovery.NewDiscoveryClientForConfigOrDie(ts.config)
	legacy := discovery.NewDiscoveryClientForConfigOrDie(ts.config).WithLegacy()
	_, fromAggregated, err := aggregated.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	_, fromLegacy, err := legacy.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(discoveryRows(fromLegacy), discoveryRows(fromAggregated)); diff != "" {
		t.Errorf("resources (-legacy +aggregated):\n%s", diff)
	}
}

// discoveryRows flattens resource lists to one sorted row per resource
// and subresource.
func discoveryRows(lists []*metav1.APIResourceList) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			singular := r.SingularName
			if strings.Contains(r.Name, "/") {
				// client-go gives subresources read from aggregated
				// discovery their resource's singular name.
				singular = ""
			}
			out = append(out, strings.Join([]string{l.GroupVersion, r.Name, singular, strconv.FormatBool(r.Namespaced),
				r.Group, r.Version, r.Kind, strings.Join(r.Verbs, ","), strings.Join(r.ShortNames, ","),
				strings.Join(r.Categories, ",")}, " "))
		}
	}
	sort.Strings(out)
	return out
}

// recordedAPIResources is the recording without its header and the rows
// of notServed.
func recordedAPIResources(t *testing.T) []string {
	data, err := os.ReadFile("testdata/api-resources-v1.37.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var out []string
	for _, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if _, skip := notServed[f[2]+" "+f[0]]; !skip {
			out = append(out, line)
		}
	}
	if len(out)+len(notServed) != len(lines)-1 {
		t.Fatalf("notServed names rows the recording does not have")
	}
	return out
}

// The recording testdata/api-subresources-v1.37.tsv lists the subresources
// kube-apiserver v1.37.2 serves of the resources in api-resources-v1.37.tsv,
// one row per subresource: name, group-version, namespaced, kind (prefixed
// with group/version when it is another group-version's, as pods/eviction's
// policy/v1/Eviction) and verbs, in kubectl's order (group, then name). It
// was derived from the upstream module strata builds with, not captured
// from a running cluster: the rows are those of the legacy discovery
// documents upstream records from a running kube-apiserver
// (k8s.io/kubernetes@v1.37.2/api/discovery/api__v1.json and
// apis__<group>__<version>.json, written by hack/update-openapi-spec.sh)
// whose name has a slash and whose parent resource and group-version are a
// row of api-resources-v1.37.tsv. Those documents are recorded with every
// alpha and beta feature on; the only feature-gated subresource among the
// rows, pods/resize (InPlacePodVerticalScaling), is GA and locked on in
// v1.37, so the rows are those of the default flags too.

// TestAPISubresourcesMatchKubeAPIServer compares the subresources strata's
// legacy discovery lists for each group-version of the resource recording
// with the recording of kube-apiserver v1.37's subresources.
func TestAPISubresourcesMatchKubeAPIServer(t *testing.T) {
	ts := newTestServer(t)
	data, err := os.ReadFile("testdata/api-subresources-v1.37.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:]
	versions := map[string]bool{}
	for _, line := range recordedAPIResources(t) {
		versions[strings.Split(line, "\t")[2]] = true
	}
	var lists []*metav1.APIResourceList
	for gv := range versions {
		list, err := ts.client.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
		sub := &metav1.APIResourceList{GroupVersion: gv}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				sub.APIResources = append(sub.APIResources, r)
			}
		}
		lists = append(lists, sub)
	}
	if diff := cmp.Diff(want, subresourceRows(t, lists)); diff != "" {
		t.Errorf("subresources (-kube-apiserver v1.37 +strata):\n%s", diff)
	}
}

// subresourceRows are the recording's rows of discovery's subresources.
func subresourceRows(t *testing.T, lists []*metav1.APIResourceList) []string {
	t.Helper()
	type row struct{ group, line string }
	var rows []row
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			kind := r.Kind
			if r.Group != "" || r.Version != "" {
				kind = strings.TrimPrefix(r.Group+"/"+r.Version+"/"+r.Kind, "/")
			}
			rows = append(rows, row{gv.Group, strings.Join([]string{r.Name, list.GroupVersion,
				strconv.FormatBool(r.Namespaced), kind, strings.Join(r.Verbs, ",")}, "\t")})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].group != rows[j].group {
			return rows[i].group < rows[j].group
		}
		return rows[i].line < rows[j].line
	})
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.line
	}
	return out
}

// TestDiscoveryStorageVersionHash: legacy discovery gives each stored
// resource kube-apiserver's hash of its storage version (HPAs in
// autoscaling/v1 are stored as v2), and none to subresources and to
// resources that are not stored.
func TestDiscoveryStorageVersionHash(t *testing.T) {
	ts := newTestServer(t)
	hash := func(gv, resource string) string {
		list, err := ts.client.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if r.Name == resource {
				return r.StorageVersionHash
			}
		}
		t.Fatalf("%s has no %s", gv, resource)
		return ""
	}
	for _, tt := range []struct{ gv, resource, want string }{
		{"apps/v1", "deployments", endpointsdiscovery.StorageVersionHash("apps", "v1", "Deployment")},
		{"apps/v1", "deployments/scale", ""},
		{"autoscaling/v1", "horizontalpodautoscalers", endpointsdiscovery.StorageVersionHash("autoscaling", "v2", "HorizontalPodAutoscaler")},
		{"events.k8s.io/v1", "events", endpointsdiscovery.StorageVersionHash("", "v1", "Event")},
		{"v1", "bindings", ""},
	} {
		if got := hash(tt.gv, tt.resource); got != tt.want {
			t.Errorf("%s %s: storageVersionHash %q, want %q", tt.gv, tt.resource, got, tt.want)
		}
	}
}
