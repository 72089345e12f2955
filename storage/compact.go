package storage

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactRevKey is the key through which kube-apiserver replicas coordinate
// compaction; strata uses the same protocol so replicas (and a
// kube-apiserver sharing the etcd) cooperate.
const compactRevKey = "compact_rev_key"

// DefaultCompactionInterval is kube-apiserver's default.
const DefaultCompactionInterval = 5 * time.Minute

// Compactor periodically compacts etcd, cooperating with other replicas.
//
// The protocol: compact_rev_key holds the revision last compacted, and its
// etcd version counts compactions. Each round a replica tries
//
//	if version(compact_rev_key) == v { put(compact_rev_key, r) }
//
// where v is the version it saw last round and r the store revision it saw
// last round. If the transaction wins, it compacts r: one interval's worth
// of history is kept. If it loses, another replica compacted during this
// interval; it adopts the new version and skips. Either way it remembers the
// current revision for the next round. Stores learn each compaction by
// watching the key.
type Compactor struct {
	client   *clientv3.Client
	interval time.Duration
	log      *slog.Logger
}

// NewCompactor returns a compactor; interval <= 0 means
// DefaultCompactionInterval; a nil logger discards.
func NewCompactor(client *clientv3.Client, interval time.Duration, log *slog.Logger) *Compactor {
	if interval <= 0 {
		interval = DefaultCompactionInterval
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Compactor{client: client, interval: interval, log: log}
}

// Run compacts every interval until ctx ends.
func (c *Compactor) Run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	var version, rev int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var err error
		version, rev, err = compactRound(ctx, c.client, version, rev)
		if err != nil {
			c.log.Warn("etcd compaction failed", "revision", rev, "err", err)
		}
	}
}

// compactRound runs one round of the protocol. It returns the version and
// revision to use next round.
func compactRound(ctx context.Context, client *clientv3.Client, version, rev int64) (int64, int64, error) {
	resp, err := client.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return version, rev, fmt.Errorf("storage: compaction: updating %s: %w", compactRevKey, err)
	}
	cur := resp.Header.Revision
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		if len(kvs) == 0 {
			return 0, cur, nil
		}
		return kvs[0].Version, cur, nil
	}
	if rev == 0 { // the first round only records a revision
		return version + 1, cur, nil
	}
	if _, err := client.Compact(ctx, rev); err != nil && !isCompacted(err) {
		return version + 1, cur, fmt.Errorf("storage: compaction: compacting revision %d: %w", rev, err)
	}
	return version + 1, cur, nil
}

// Compact compacts etcd at rev now, through the same protocol (so periodic
// compactors of other replicas notice, and every store learns of it). It is
// for operators and tests.
func Compact(ctx context.Context, client *clientv3.Client, rev int64) error {
	for {
		resp, err := client.Get(ctx, compactRevKey)
		if err != nil {
			return fmt.Errorf("storage: compaction: reading %s: %w", compactRevKey, err)
		}
		var version int64
		if len(resp.Kvs) > 0 {
			version = resp.Kvs[0].Version
		}
		txn, err := client.Txn(ctx).
			If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
			Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
			Commit()
		if err != nil {
			return fmt.Errorf("storage: compaction: updating %s: %w", compactRevKey, err)
		}
		if !txn.Succeeded {
			continue
		}
		if _, err := client.Compact(ctx, rev); err != nil && !isCompacted(err) {
			return fmt.Errorf("storage: compaction: compacting revision %d: %w", rev, err)
		}
		return nil
	}
}

// followCompaction tells the cache about every compaction recorded in
// compact_rev_key, by any replica, until ctx ends.
func (c *watchCache) followCompaction(ctx context.Context) {
	for ctx.Err() == nil {
		resp, err := c.s.client.Get(ctx, compactRevKey)
		if err == nil {
			if len(resp.Kvs) > 0 {
				c.noteCompactedValue(resp.Kvs[0].Value)
			}
			for wr := range c.s.client.Watch(ctx, compactRevKey, clientv3.WithRev(resp.Header.Revision+1)) {
				if wr.Err() != nil {
					break
				}
				for _, ev := range wr.Events {
					c.noteCompactedValue(ev.Kv.Value)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *watchCache) noteCompactedValue(v []byte) {
	if rev, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		c.noteCompacted(rev)
	}
}
