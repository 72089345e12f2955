package apiserver

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints"
)

// aggregatedContentType is the media type of aggregated discovery
// documents, as clients ask for them and kube-apiserver answers.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// wantsAggregated says whether the first media type of the Accept header
// strata can answer is aggregated discovery (JSON, apidiscovery.k8s.io/v2)
// rather than the legacy documents.
func wantsAggregated(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch {
		case mediaType == "application/json" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" &&
			params["as"] == "APIGroupDiscoveryList":
			return true
		case mediaType == "application/json" && params["g"] == "", mediaType == "*/*", mediaType == "application/*":
			return false
		}
	}
	return false
}

// writeAggregated answers /api (the core group) or /apis (every other
// group) with the aggregated discovery document: each group with its
// versions, preferred first, and each version's resources converted from
// the legacy resource list by kube-apiserver's own converter.
func (s *served) writeAggregated(w http.ResponseWriter, core bool) {
	list := &apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList",
		APIVersion: "apidiscovery.k8s.io/v2"}, Items: []apidiscoveryv2.APIGroupDiscovery{}}
	for _, g := range s.groups {
		if (g == "") != core {
			continue
		}
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range s.versionsOf(g) {
			resources, err := endpoints.ConvertGroupVersionIntoToDiscovery(s.resourceList(schema.GroupVersion{Group: g, Version: v}))
			if err != nil {
				writeError(w, err)
				return
			}
			item.Versions = append(item.Versions, apidiscoveryv2.APIVersionDiscovery{Version: v, Resources: resources,
				Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent})
		}
		list.Items = append(list.Items, item)
	}
	data, err := json.Marshal(list)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", aggregatedContentType)
	w.Header().Set("Vary", "Accept")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(data, '\n'))
}
