package storage

import (
	"context"
	"errors"
	"time"
)

// conversionError marks a stored object that did not decode because its
// conversion to the served version failed (a CRD's conversion webhook
// that is down or wrong): unlike bad bytes, that may heal by itself.
type conversionError struct{ err error }

func (e conversionError) Error() string { return e.err.Error() }
func (e conversionError) Unwrap() error { return e.err }

// isConversionError says whether err is a failed conversion.
func isConversionError(err error) bool {
	var ce conversionError
	return errors.As(err, &ce)
}

// unconvertible says whether a corrupt entry is one whose conversion
// failed.
func unconvertible(e *Error) bool { return isConversionError(e.cause) }

// conversionProbeInterval is how often a watch cache holding objects it
// could not convert tries one of them again.
const conversionProbeInterval = 2 * time.Second

// errConversionsHealed ends a watch cache's follow so that it lists again:
// objects whose conversion failed convert now.
var errConversionsHealed = errors.New("storage: objects that could not be converted convert now; relisting")

// probeConversions tries, off the follow loop (a hanging webhook must not
// hold up events), to decode one object whose conversion failed, and
// reports on healed when it decodes now. kube-apiserver's watch cache
// lists again after such a failure until the list succeeds; this one keeps
// serving, and lists again once a conversion succeeds.
func (c *watchCache) probeConversions(ctx context.Context, healed chan<- struct{}) {
	c.mu.RLock()
	var key string
	for k, e := range c.corrupt {
		if unconvertible(e) {
			key = k
			break
		}
	}
	c.mu.RUnlock()
	if key == "" {
		return
	}
	resp, err := c.s.client.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return
	}
	if _, err := c.s.decodeKV(resp.Kvs[0]); err == nil {
		select {
		case healed <- struct{}{}:
		default:
		}
	}
}
