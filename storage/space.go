package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultSpaceCheckInterval is how often SpaceGuard.Run looks for etcd's
// NOSPACE alarm.
const DefaultSpaceCheckInterval = 10 * time.Second

// defaultQuotaBytes is etcd's default space quota, assumed for a member
// whose status does not report its own.
const defaultQuotaBytes = 2 << 30

// SpaceGuard watches etcd's NOSPACE alarm. etcd raises it when its
// database reaches its space quota, and then refuses every write but
// deletions until an operator frees space and disarms it; strata's own
// compaction cannot even record itself then. The guard reports the alarm
// (Check, for /readyz) and recovers from it (Recover): it compacts all
// history, defragments every member and disarms the alarm once the
// database fits in the quota again.
type SpaceGuard struct {
	client *clientv3.Client
	log    *slog.Logger
	// mu serialises recoveries; tried is the revision the last recovery
	// that could not free enough space ran at: Run retries only once
	// something changed (an object was deleted).
	mu    sync.Mutex
	tried int64
	// wake asks Run to check now (Wake); one pending request is enough.
	wake chan struct{}
}

// wakeGap keeps the checks a storm of refused writes asks for (Wake) this
// far apart: each is a status request to etcd.
const wakeGap = time.Second

// NewSpaceGuard returns a guard of the etcd client reaches; a nil logger
// discards.
func NewSpaceGuard(client *clientv3.Client, log *slog.Logger) *SpaceGuard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SpaceGuard{client: client, log: log, wake: make(chan struct{}, 1)}
}

// Check fails while a NOSPACE alarm is raised, naming the members. It
// reads the alarms from a member's status (every member holds them all),
// not with AlarmList: etcd makes that a raft proposal, a WAL write and
// fsync for every /readyz probe, queued behind the writes in flight, which
// slows the probes most in a start's first writes. Only disarm,
// which needs the alarms themselves, lists them.
func (g *SpaceGuard) Check(ctx context.Context) error {
	members, err := g.alarmed(ctx)
	if err != nil {
		return err
	}
	if len(members) > 0 {
		return fmt.Errorf("etcd: database space exceeded (NOSPACE alarm on member %s): writes are refused until history is compacted and the database defragmented",
			strings.Join(members, ", "))
	}
	return nil
}

// alarmed returns the IDs (hex) of the members with a NOSPACE alarm, read
// from the status of the member the client's connection reaches (not with
// Maintenance.Status, which dials the endpoint anew for every call): etcd
// lists each raised alarm among the status's errors, as the alarm's text
// ("memberID:<decimal ID> alarm:NOSPACE"), which is what "etcdctl endpoint
// status" shows. Check and Run read them so.
func (g *SpaceGuard) alarmed(ctx context.Context) ([]string, error) {
	st, err := pb.NewMaintenanceClient(g.client.ActiveConnection()).Status(ctx, &pb.StatusRequest{})
	if err != nil {
		return nil, fmt.Errorf("etcd: reading the alarms from a member's status: %w", err)
	}
	var members []string
	for _, e := range st.Errors {
		if id, ok := noSpaceMember(e); ok {
			members = append(members, id)
		}
	}
	return members, nil
}

// noSpaceMember returns the member ID (hex, as alarmed names it) of a
// status error that is a NOSPACE alarm.
func noSpaceMember(statusError string) (string, bool) {
	fields := strings.Fields(statusError)
	if len(fields) != 2 || fields[1] != "alarm:"+pb.AlarmType_NOSPACE.String() {
		return "", false
	}
	id, ok := strings.CutPrefix(fields[0], "memberID:")
	if !ok {
		return "", false
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%x", n), true
}

// Wake asks Run to check the alarm now rather than at its next interval:
// a write was refused for space (storage.Config.OnNoSpace), perhaps after
// objects were deleted to free it, and writes fail until the guard
// recovers. It never blocks.
func (g *SpaceGuard) Wake() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Run checks every interval (<= 0: DefaultSpaceCheckInterval), and when
// woken (Wake), and recovers when the alarm is raised, until ctx ends.
func (g *SpaceGuard) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultSpaceCheckInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-g.wake:
			if wait := wakeGap - time.Since(last); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		last = time.Now()
		if members, err := g.alarmed(ctx); err != nil || len(members) == 0 {
			continue
		}
		if _, err := g.Recover(ctx); err != nil && ctx.Err() == nil {
			g.log.Error("etcd space: recovery from the NOSPACE alarm failed", "err", err)
		}
	}
}

// Recovery is what one Recover did.
type Recovery struct {
	Revision           int64 // history was compacted up to it
	Before, After      int64 // the largest member's database size, in bytes
	Quota              int64 // the smallest member's space quota
	Disarmed, Repeated bool  // the alarm was disarmed; nothing changed since the last attempt
}

// Recover frees space after a NOSPACE alarm: it compacts etcd to its
// current revision, defragments every endpoint and, when every database
// then fits in its quota, disarms the alarm and records the compaction in
// compact_rev_key, so that every store (on every replica) answers 410 for
// the revisions it dropped. It logs what it did.
func (g *SpaceGuard) Recover(ctx context.Context) (Recovery, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var r Recovery
	resp, err := g.client.Get(ctx, compactRevKey, clientv3.WithCountOnly())
	if err != nil {
		return r, fmt.Errorf("storage: space recovery: reading the current revision: %w", err)
	}
	r.Revision = resp.Header.Revision
	if r.Revision == g.tried {
		r.Repeated = true
		return r, nil
	}
	// Physical: the compaction has freed its pages before defragmenting.
	if _, err := g.client.Compact(ctx, r.Revision, clientv3.WithCompactPhysical()); err != nil && !isCompacted(err) {
		return r, fmt.Errorf("storage: space recovery: compacting revision %d: %w", r.Revision, err)
	}
	if err := g.defragment(ctx, &r); err != nil {
		return r, err
	}
	if r.After >= r.Quota {
		g.tried = r.Revision
		g.log.Error("etcd space: still over the quota after compaction and defragmentation: delete objects or raise --quota-backend-bytes",
			"revision", r.Revision, "bytes", r.After, "quota", r.Quota)
		return r, nil
	}
	if err := g.disarm(ctx); err != nil {
		return r, err
	}
	r.Disarmed = true
	if err := Compact(ctx, g.client, r.Revision); err != nil {
		return r, fmt.Errorf("storage: space recovery: recording the compaction: %w", err)
	}
	g.log.Warn("etcd space: NOSPACE alarm: compacted, defragmented and disarmed",
		"revision", r.Revision, "bytesBefore", r.Before, "bytesAfter", r.After, "quota", r.Quota)
	return r, nil
}

// defragment defragments every endpoint and records the sizes and quota.
func (g *SpaceGuard) defragment(ctx context.Context, r *Recovery) error {
	for _, ep := range g.client.Endpoints() {
		before, err := g.client.Status(ctx, ep)
		if err != nil {
			return fmt.Errorf("storage: space recovery: status of %s: %w", ep, err)
		}
		if _, err := g.client.Defragment(ctx, ep); err != nil {
			return fmt.Errorf("storage: space recovery: defragmenting %s: %w", ep, err)
		}
		after, err := g.client.Status(ctx, ep)
		if err != nil {
			return fmt.Errorf("storage: space recovery: status of %s: %w", ep, err)
		}
		quota := after.DbSizeQuota
		if quota <= 0 {
			quota = defaultQuotaBytes
		}
		r.Before, r.After = max(r.Before, before.DbSize), max(r.After, after.DbSize)
		if r.Quota == 0 || quota < r.Quota {
			r.Quota = quota
		}
	}
	return nil
}

// disarm disarms every NOSPACE alarm.
func (g *SpaceGuard) disarm(ctx context.Context) error {
	resp, err := g.client.AlarmList(ctx)
	if err != nil {
		return fmt.Errorf("storage: space recovery: listing alarms: %w", err)
	}
	var errs []error
	for _, a := range resp.Alarms {
		if a.Alarm != pb.AlarmType_NOSPACE {
			continue
		}
		if _, err := g.client.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			errs = append(errs, fmt.Errorf("storage: space recovery: disarming member %x: %w", a.MemberID, err))
		}
	}
	return errors.Join(errs...)
}
