package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"

	"github.com/stratadev/strata/apiserver/openapi"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/strategicpatch"
)

// DefaultMaxRequestBodyBytes is kube-apiserver's limit on a request body.
const DefaultMaxRequestBodyBytes = 3 * 1024 * 1024

// DefaultMinWatchTimeout is kube-apiserver's --min-request-timeout: a watch
// without timeoutSeconds ends after a random time between it and twice it.
const DefaultMinWatchTimeout = 30 * time.Minute

// Config describes a Server.
type Config struct {
	// Client reaches etcd. The server does not close it.
	Client *clientv3.Client
	// Kinds are the served kinds; default registry.Builtin().
	Kinds []*registry.Kind
	// PatchCompat selects the strategic-merge-patch behaviour: strata's
	// default or apimachinery's exact one.
	PatchCompat strategicpatch.Compat
	// MaxRequestBodyBytes bounds request bodies (413 beyond it); default
	// DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// MinWatchTimeout: see DefaultMinWatchTimeout.
	MinWatchTimeout time.Duration
	// Version is what /version answers.
	Version version.Info
	// Storage adjusts each kind's storage configuration (tests shorten
	// waits and intervals); may be nil.
	Storage func(*storage.Config)
	// Logger receives the server's logs; default discards them.
	Logger *slog.Logger
}

// resource is one served kind and its store.
type resource struct {
	kind  *registry.Kind
	store *storage.Store
}

// Server is the API. Build it with New; Close stops its stores.
type Server struct {
	cfg        Config
	resources  map[schema.GroupVersionResource]*resource
	byGroup    map[string][]*resource // discovery order
	groups     []string               // API groups in discovery order ("" first)
	namespaces *resource
	openapi    *openapi.Service
	ctx        context.Context
	cancel     context.CancelFunc
	log        *slog.Logger
}

// New starts a store (and its watch cache) for every kind.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("apiserver: config: an etcd client is required")
	}
	if cfg.Kinds == nil {
		cfg.Kinds = registry.Builtin()
	}
	if cfg.MaxRequestBodyBytes <= 0 {
		cfg.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if cfg.MinWatchTimeout <= 0 {
		cfg.MinWatchTimeout = DefaultMinWatchTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, resources: map[schema.GroupVersionResource]*resource{},
		byGroup: map[string][]*resource{}, ctx: ctx, cancel: cancel, log: cfg.Logger}
	for _, k := range cfg.Kinds {
		if err := s.addKind(k); err != nil {
			s.Close()
			return nil, err
		}
	}
	if s.namespaces == nil {
		s.Close()
		return nil, errors.New("apiserver: config: the namespaces kind is required")
	}
	var err error
	if s.openapi, err = openapi.New(generatedopenapi.GetOpenAPIDefinitions, clientgoscheme.Scheme, openAPIResources(cfg.Kinds),
		openapi.WithInfo("Kubernetes", cfg.Version.GitVersion)); err != nil {
		s.Close()
		return nil, fmt.Errorf("apiserver: OpenAPI documents: %w", err)
	}
	return s, nil
}

func (s *Server) addKind(k *registry.Kind) error {
	sc := storage.Config{Client: s.cfg.Client, Resource: k.GroupResource(), Kind: k.GVK,
		Namespaced: k.Namespaced, Logger: s.log}
	if s.cfg.Storage != nil {
		s.cfg.Storage(&sc)
	}
	st, err := storage.New(sc)
	if err != nil {
		return fmt.Errorf("apiserver: store for %s: %w", k.GroupResource(), err)
	}
	r := &resource{kind: k, store: st}
	s.resources[k.GroupVersionResource()] = r
	if _, seen := s.byGroup[k.GVK.Group]; !seen {
		s.groups = append(s.groups, k.GVK.Group)
	}
	s.byGroup[k.GVK.Group] = append(s.byGroup[k.GVK.Group], r)
	if k.GVK.Group == "" && k.Resource == "namespaces" {
		s.namespaces = r
	}
	return nil
}

// openAPIResources describes the served kinds for the OpenAPI documents.
func openAPIResources(kinds []*registry.Kind) []openapi.Resource {
	out := make([]openapi.Resource, 0, len(kinds))
	for _, k := range kinds {
		r := openapi.Resource{GVK: k.GVK, Plural: k.Resource, Namespaced: k.Namespaced, Verbs: k.Verbs()}
		if k.HasStatus() {
			r.Subresources = []string{"status"}
		}
		out = append(out, r)
	}
	return out
}

// WaitReady blocks until every store's watch cache holds its initial list.
func (s *Server) WaitReady(ctx context.Context) error {
	for _, r := range s.resources {
		if err := r.store.WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops background work and every store.
func (s *Server) Close() {
	s.cancel()
	for _, r := range s.resources {
		r.store.Close()
	}
}
