package apiserver

import (
	"net"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serveDiscovery answers /api, /api/v1, /apis, /apis/{group} and
// /apis/{group}/{version} with the legacy discovery documents (clients
// asking for aggregated discovery fall back to them).
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	sv := s.current()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) == 1 && (parts[0] == "api" || parts[0] == "apis") && wantsAggregated(r) {
		sv.writeAggregated(w, parts[0] == "api")
		return
	}
	switch {
	case len(parts) == 1 && parts[0] == "api":
		writeJSON(w, http.StatusOK, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: serverAddresses(r),
		})
	case len(parts) == 2 && parts[0] == "api" && parts[1] == "v1":
		sv.writeResourceList(w, schema.GroupVersion{Version: "v1"})
	case len(parts) == 1 && parts[0] == "apis":
		list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		for _, g := range sv.groups {
			if g != "" {
				list.Groups = append(list.Groups, sv.apiGroup(g))
			}
		}
		writeJSON(w, http.StatusOK, list)
	case len(parts) == 2 && parts[0] == "apis" && sv.byGroup[parts[1]] != nil && parts[1] != "":
		g := sv.apiGroup(parts[1])
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		writeJSON(w, http.StatusOK, &g)
	case len(parts) == 3 && parts[0] == "apis" && sv.servesVersion(parts[1], parts[2]):
		sv.writeResourceList(w, schema.GroupVersion{Group: parts[1], Version: parts[2]})
	default:
		writeError(w, notFoundPath())
	}
}

func (s *served) servesVersion(group, version string) bool {
	if group == "" {
		return false
	}
	for _, r := range s.byGroup[group] {
		if r.kind.GVK.Version == version {
			return true
		}
	}
	return false
}

func (s *served) apiGroup(group string) metav1.APIGroup {
	g := metav1.APIGroup{Name: group}
	for _, v := range s.versionsOf(group) {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

// versionsOf lists a group's served versions, the preferred one first.
func (s *served) versionsOf(group string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range s.byGroup[group] {
		if v := r.kind.GVK.Version; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func (s *served) writeResourceList(w http.ResponseWriter, gv schema.GroupVersion) {
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(), APIResources: s.resourceList(gv)}
	writeJSON(w, http.StatusOK, list)
}

// resourceList is the legacy discovery list of a group-version: each
// resource, then its subresources.
func (s *served) resourceList(gv schema.GroupVersion) []metav1.APIResource {
	list := &metav1.APIResourceList{APIResources: []metav1.APIResource{}}
	for _, r := range s.byGroup[gv.Group] {
		k := r.kind
		if k.GVK.Version != gv.Version {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: k.Resource, SingularName: k.SingularName, Namespaced: k.Namespaced, Kind: k.GVK.Kind,
			Verbs: k.Verbs(), ShortNames: k.ShortNames, Categories: k.Categories, StorageVersionHash: k.StorageVersionHash(),
		})
		list.APIResources = append(list.APIResources, k.DiscoverySubresources()...)
	}
	return list.APIResources
}

// serverAddresses is the address clients reached the server at, as
// kube-apiserver reports it in /api.
func serverAddresses(r *http.Request) []metav1.ServerAddressByClientCIDR {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	return []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: host}}
}
