package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/internal/jsondec"
	"github.com/stratadev/strata/internal/sharedread"
)

// Defaults for Config.
const (
	DefaultPrefix           = "/registry"
	DefaultMaxObjectBytes   = 1536 * 1024 // etcd's default request limit
	DefaultTooLargeRVWait   = 3 * time.Second
	DefaultBookmarkInterval = time.Minute
	DefaultProgressInterval = time.Second
	DefaultCacheHistory     = 10000
	DefaultCacheBytes       = 32 << 20
	DefaultWatchBuffer      = 1024
)

// Config describes one resource type's store.
type Config struct {
	// Client reaches etcd. The store does not close it.
	Client *clientv3.Client
	// Resource names the type (group "" is the core group).
	Resource schema.GroupResource
	// Kind is the apiVersion/kind that bookmarks and lists carry.
	Kind schema.GroupVersionKind
	// StorageVersion, when set, is the version of Kind's group objects are
	// written in; they are read back as Kind's version whatever version
	// they were written in (several served versions of one resource,
	// converted by apiVersion only, or by Convert). An update rewrites an
	// object stored in another version even when nothing changed (storage
	// version migration). Empty: objects are kept as given.
	StorageVersion string
	// Namespaced says whether objects live in namespaces.
	Namespaced bool
	// KeyResource, when set, is the resource whose keys the objects live
	// under, shared with another store (events.k8s.io Events are core
	// Events); default Resource.
	KeyResource schema.GroupResource
	// Convert, when set, converts objects between the version they are
	// served in and the one they are stored in, for a resource served in
	// several versions (autoscaling/v1 and v2 HorizontalPodAutoscalers,
	// custom resources with a conversion webhook) or groups (events). A
	// failed conversion is a 500 with the converter's words; the watch
	// cache retries objects it could not convert (cacheretry.go).
	Convert *Conversion
	// OnRead, when set, completes every object read from etcd, after
	// conversion: custom resources get their version's pruning and
	// defaults there, as kube-apiserver's storage codec applies them.
	OnRead func(*unstructured.Unstructured) error
	// Prefix is the key prefix; default DefaultPrefix.
	Prefix string
	// MaxObjectBytes refuses larger objects (key + value) with
	// ErrRequestTooLarge; default DefaultMaxObjectBytes.
	MaxObjectBytes int
	// TooLargeRVWait is how long a read at a revision the store has not
	// reached waits before ErrTooLargeRV; default DefaultTooLargeRVWait.
	TooLargeRVWait time.Duration
	// BookmarkInterval is the period of watch bookmarks; default 1m.
	BookmarkInterval time.Duration
	// ProgressInterval is how often the watch cache asks etcd for progress
	// so its revision moves with writes to other types; default 1s.
	ProgressInterval time.Duration
	// CacheHistory is how many events the watch cache keeps for watch
	// starts; default DefaultCacheHistory.
	CacheHistory int
	// CacheBytes bounds the same history by the stored size of its events
	// (key and JSON; decoded objects take a few times more memory):
	// beyond it the oldest events are dropped, and watches from before
	// them are 410 Expired. Default DefaultCacheBytes.
	CacheBytes int64
	// ObserveCacheBytes, when set, is told the history's size after every
	// change, for strata_watch_cache_bytes.
	ObserveCacheBytes func(bytes int64)
	// OnNoSpace, when set, is called when etcd refuses a write for its
	// space quota (the NOSPACE alarm), so that recovery need not wait
	// for its next check (SpaceGuard.Wake).
	OnNoSpace func()
	// WatchBuffer is each watcher's event buffer; a watcher that falls this
	// far behind is ended (the client re-watches). Default 1024.
	WatchBuffer int
	// Logger receives the store's logs; default discards them.
	Logger *slog.Logger
	// Observe, when set, is told of every etcd request the store makes for
	// a client (operation get, list, count, create, update, delete or
	// currentRevision), for
	// kube-apiserver's etcd_request_duration_seconds.
	Observe func(operation string, d time.Duration, err error)
	// NewWatcher makes the watcher each watch of the cache's etcd uses,
	// with streams of its own; default clientv3.NewWatcher(Client), which a
	// client without a connection of its own (etcd.Server.Local's) cannot
	// make.
	NewWatcher func() clientv3.Watcher
}

// Store implements Interface on etcd with a watch cache.
type Store struct {
	cfg    Config
	client *clientv3.Client
	prefix string // resource prefix, ending in "/"
	// versions are the apiVersion rewrites of Config.StorageVersion.
	versions apiVersions
	cache    *watchCache
	// revisions reads etcd's revision for consistent reads from the cache.
	revisions *sharedread.Reader
	// written are the revisions of the store's latest updates.
	written recentWrites
	// reuse lets the watch cache's objects share their managed fields as
	// they are decoded; nil for kinds whose reads change the objects
	// decoded (a conversion, OnRead), which may change the fields too.
	reuse  *jsondec.Reuse
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ Interface = (*Store)(nil)

// New starts a store: its watch cache lists the resource and watches it until
// Close. Reads that need the cache wait for it to be ready.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, errors.New("storage: config: an etcd client is required")
	}
	if cfg.Resource.Resource == "" {
		return nil, errors.New("storage: config: a resource name is required")
	}
	cfg = withDefaults(cfg)
	s := &Store{cfg: cfg, client: cfg.Client, log: cfg.Logger}
	keys := cfg.Resource
	if cfg.KeyResource.Resource != "" {
		keys = cfg.KeyResource
	}
	s.prefix = resourcePrefix(cfg.Prefix, keys)
	s.versions = apiVersionsOf(cfg)
	if cfg.Convert == nil && cfg.OnRead == nil {
		s.reuse = jsondec.NewReuse("metadata", "managedFields", reuseBytes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.cache = newWatchCache(s)
	s.revisions = sharedread.New(s.currentRevision, revisionReadTimeout)
	s.wg.Add(2)
	go func() { defer s.wg.Done(); s.cache.run(ctx) }()
	go func() { defer s.wg.Done(); s.cache.followCompaction(ctx) }()
	return s, nil
}

// reuseBytes bounds the JSON of the managed fields a store's decoder
// keeps (Store.reuse): a bulk load's objects have a few dozen distinct
// lists, and each update of an object adds one (its time changes), so a
// small table serves loads, and one updated often starts afresh often.
const reuseBytes = 64 << 10

func withDefaults(cfg Config) Config {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.NewWatcher == nil {
		client := cfg.Client
		cfg.NewWatcher = func() clientv3.Watcher { return clientv3.NewWatcher(client) }
	}
	if cfg.MaxObjectBytes <= 0 {
		cfg.MaxObjectBytes = DefaultMaxObjectBytes
	}
	if cfg.TooLargeRVWait <= 0 {
		cfg.TooLargeRVWait = DefaultTooLargeRVWait
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = DefaultBookmarkInterval
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = DefaultProgressInterval
	}
	if cfg.CacheHistory <= 0 {
		cfg.CacheHistory = DefaultCacheHistory
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.WatchBuffer <= 0 {
		cfg.WatchBuffer = DefaultWatchBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return cfg
}

// Close stops the watch cache and ends every watch. It does not close the
// etcd client.
func (s *Store) Close() {
	s.cancel()
	s.wg.Wait()
}

// WaitReady blocks until the watch cache has its initial list, or ctx ends.
func (s *Store) WaitReady(ctx context.Context) error {
	if err := s.cache.waitRevision(ctx, 0, 0); err != nil {
		return fmt.Errorf("storage: watch cache for %s: %w", s.cfg.Resource, err)
	}
	return nil
}

// revisionReadTimeout bounds one shared revision read; callers stop waiting
// for it when their own contexts end.
const revisionReadTimeout = 10 * time.Second

// currentRevision returns etcd's newest revision by a quorum read.
func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	start := time.Now()
	resp, err := s.client.Get(ctx, compactRevKey, clientv3.WithCountOnly())
	s.observe("currentRevision", start, err)
	if err != nil {
		return 0, internal(err, "storage: reading the current revision")
	}
	return resp.Header.Revision, nil
}

// observe reports one etcd request to Config.Observe.
func (s *Store) observe(operation string, start time.Time, err error) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(operation, time.Since(start), err)
	}
}
