package filters

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// requestInfoFactory parses paths as the apiserver package does (and as
// kube-apiserver does).
var requestInfoFactory = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// requestInfo is the RequestInfo of r, and whether the factory could parse
// it; a request it cannot parse is a non-resource request, as
// kube-apiserver's metrics treat it.
func requestInfo(r *http.Request) (*request.RequestInfo, bool) {
	info, err := requestInfoFactory.NewRequestInfo(r)
	if err != nil {
		return &request.RequestInfo{Verb: strings.ToLower(r.Method), Path: r.URL.Path}, false
	}
	return info, true
}

// Long-running requests as kube-apiserver's command defines them
// (BasicLongRunningRequestCheck with these verbs and subresources): they
// are not limited in flight and are tracked by
// apiserver_longrunning_requests while they run.
var (
	longRunningVerbs        = []string{"watch", "proxy"}
	longRunningSubresources = []string{"attach", "exec", "proxy", "log", "portforward"}
)

// IsLongRunning says whether a request is one kube-apiserver's
// LongRunningFunc exempts from limits and timeouts: a watch or proxy, an
// attach, exec, proxy, log or portforward subresource, or pprof.
func IsLongRunning(info *request.RequestInfo) bool {
	if slices.Contains(longRunningVerbs, info.Verb) {
		return true
	}
	if info.IsResourceRequest {
		return slices.Contains(longRunningSubresources, info.Subresource)
	}
	return strings.HasPrefix(info.Path, "/debug/pprof/")
}

// isMutating: kube-apiserver's max-in-flight filter counts every verb but
// get, list and watch against the mutating limit (non-resource requests
// have the lower-case HTTP method as verb).
func isMutating(info *request.RequestInfo) bool {
	return !slices.Contains([]string{"get", "list", "watch"}, info.Verb)
}

// labels are the label values of a request in the request metrics.
type labels struct {
	verb, dryRun, group, version, resource, subresource, scope, component string
}

// validVerbs are the verbs kube-apiserver reports; any other is "other".
var validVerbs = []string{"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST",
	"PATCH", "POST", "PROXY", "PUT", "UPDATE", "WATCH", "WATCHLIST"}

// healthPaths are the non-resource paths kube-apiserver's metrics name
// (as subresource, with an empty component).
var healthPaths = []string{"/healthz", "/livez", "/readyz"}

// requestLabels computes the labels as kube-apiserver's MonitorRequest and
// RecordDroppedRequest do. The verb comes from the HTTP method: GET is LIST
// unless one object is named, a watch is WATCH, PATCH with an apply-patch
// body is APPLY, a connect subresource is CONNECT; a delete of a
// collection is DELETE. known, when set, decides which resources may
// appear as label values.
func requestLabels(r *http.Request, info *request.RequestInfo, known func(schema.GroupVersionResource, string) bool) labels {
	scope := metrics.CleanScope(info)
	l := labels{verb: reportedVerb(r, info, scope), dryRun: cleanDryRun(r.URL), scope: scope, component: metrics.APIServerComponent}
	switch {
	case info.IsResourceRequest:
		gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
		if known == nil || known(gvr, info.Subresource) {
			l.group, l.version, l.resource, l.subresource = info.APIGroup, info.APIVersion, info.Resource, info.Subresource
		}
	case slices.Contains(healthPaths, info.Path):
		l.subresource, l.component = info.Path, ""
	}
	return l
}

func reportedVerb(r *http.Request, info *request.RequestInfo, scope string) string {
	if info.Verb == "watch" {
		// Also the deprecated /watch/ paths, which CanonicalVerb alone
		// reports as LIST.
		return metrics.MethodWatch
	}
	verb := metrics.CleanVerb(metrics.CanonicalVerb(strings.ToUpper(r.Method), scope), r, info)
	if !slices.Contains(validVerbs, verb) {
		return metrics.OtherRequestMethod
	}
	return verb
}

// cleanDryRun is the dry_run label: empty without dryRun, "invalid" for
// values other than All, else the distinct values sorted and joined.
func cleanDryRun(u *url.URL) string {
	if !strings.Contains(u.RawQuery, "dryRun") {
		return ""
	}
	dryRun := u.Query()["dryRun"]
	if errs := validation.ValidateDryRun(nil, dryRun); len(errs) > 0 {
		return "invalid"
	}
	return strings.Join(sets.List(sets.New(dryRun...)), ",")
}
