package apiserver

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/stratadev/strata/registry"
)

// admission binds the admission chain (Config.Admission) to the write c
// names; nil when the server has none. opts are the request's options as
// webhooks receive them.
func (s *Server) admission(r *http.Request, c *call, opts runtime.Object, dryRun bool) *registry.Admitting {
	if s.cfg.Admission == nil {
		return nil
	}
	u, _ := genericapirequest.UserFrom(r.Context())
	kind := c.res.kind
	return registry.Bind(s.cfg.Admission, &registry.AdmissionRequest{
		Kind: kind.GVK, Resource: kind.GVK.GroupVersion().WithResource(kind.Resource),
		Subresource: c.info.Subresource, Namespace: c.info.Namespace, Name: c.info.Name,
		Options: opts, DryRun: dryRun, User: u, Versions: kind.ServedVersions(),
	})
}

// writeOptions are the store's options of a create, update or patch.
func (s *Server) writeOptions(r *http.Request, c *call, p writeParams, verb string) registry.WriteOptions {
	return registry.WriteOptions{DryRun: p.dryRun, Admission: s.admission(r, c, p.options(verb), p.dryRun)}
}

// options are the write's CreateOptions, UpdateOptions or PatchOptions.
func (p writeParams) options(verb string) runtime.Object {
	var dryRun []string
	if p.dryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	switch verb {
	case "create":
		return &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{Kind: "CreateOptions", APIVersion: "meta.k8s.io/v1"},
			DryRun: dryRun, FieldManager: p.fieldManager, FieldValidation: string(p.fieldValidation)}
	case "update":
		return &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{Kind: "UpdateOptions", APIVersion: "meta.k8s.io/v1"},
			DryRun: dryRun, FieldManager: p.fieldManager, FieldValidation: string(p.fieldValidation)}
	}
	var force *bool
	if p.force {
		force = &p.force
	}
	return &metav1.PatchOptions{TypeMeta: metav1.TypeMeta{Kind: "PatchOptions", APIVersion: "meta.k8s.io/v1"},
		DryRun: dryRun, Force: force, FieldManager: p.fieldManager, FieldValidation: string(p.fieldValidation)}
}
