package apiserver

import (
	"context"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/registry"
)

// gvrComponentStatuses names the componentstatuses resource, which is
// probed, not stored.
var gvrComponentStatuses = schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"}

// componentStatuses is the componentstatuses REST of kind, with etcd
// healthy when a read of one key succeeds.
func (s *Server) componentStatuses(kind *registry.Kind) *registry.ComponentStatuses {
	return kind.NewComponentStatuses(func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := s.cfg.Client.Get(ctx, "health")
		return err
	})
}

// serveComponentStatus answers get and list of componentstatuses with
// the components' probed health, as kube-apiserver does.
func (s *Server) serveComponentStatus(w http.ResponseWriter, r *http.Request, c *call) {
	m, err := negotiate(r, c.res.kind.HasProtobuf(), false)
	if err != nil {
		writeError(w, err)
		return
	}
	c.media = m
	cs := s.componentStatuses(c.res.kind)
	if c.info.Verb == "get" {
		obj, err := cs.Get(r.Context(), c.info.Name)
		if err != nil {
			writeError(w, err)
			return
		}
		s.writeOne(w, r, c, obj)
		return
	}
	in, _, err := parseListOptions(r.URL.Query(), false, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := cs.List(r.Context(), in.LabelSelector, in.FieldSelector)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeList(w, r, c, list, nil)
}
