package audit

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"gopkg.in/natefinch/lumberjack.v2"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	genericfilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
	pluginlog "k8s.io/apiserver/plugin/pkg/audit/log"
)

// Options are kube-apiserver's audit log flags.
type Options struct {
	// PolicyFile is --audit-policy-file: without it nothing is logged.
	PolicyFile string
	// LogPath is --audit-log-path: the file events are appended to, "-"
	// for standard output; without it nothing is logged.
	LogPath string
	// MaxAge (days), MaxBackups and MaxSize (megabytes) rotate the file
	// (--audit-log-maxage, --audit-log-maxbackup, --audit-log-maxsize);
	// MaxSize 0 never rotates it.
	MaxAge, MaxBackups, MaxSize int
	// Format is --audit-log-format: "json" (default) or "legacy".
	Format string
}

// Validate checks the options as kube-apiserver does, naming the flag.
func (o Options) Validate() error {
	var errs []error
	if o.Format != "" && o.Format != pluginlog.FormatJson && o.Format != pluginlog.FormatLegacy {
		errs = append(errs, fmt.Errorf("--audit-log-format: invalid audit log format %s, allowed formats are %q",
			o.Format, pluginlog.FormatLegacy+","+pluginlog.FormatJson))
	}
	for _, f := range []struct {
		flag  string
		value int
	}{{"--audit-log-maxage", o.MaxAge}, {"--audit-log-maxbackup", o.MaxBackups}, {"--audit-log-maxsize", o.MaxSize}} {
		if f.value < 0 {
			errs = append(errs, fmt.Errorf("%s %d can't be a negative number", f.flag, f.value))
		}
	}
	return errors.Join(errs...)
}

// Auditor holds the policy and the log of a server; its zero value (no
// policy or no log) only hands out audit IDs.
type Auditor struct {
	policy  audit.PolicyRuleEvaluator
	sink    audit.Backend
	closer  io.Closer
	enabled bool
}

// New reads the policy and opens the log. A policy that does not parse is
// an error naming the file.
func New(o Options) (*Auditor, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.PolicyFile == "" || o.LogPath == "" {
		return &Auditor{}, nil
	}
	p, err := policy.LoadPolicyFromFile(o.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-policy-file: %w", err)
	}
	w, closer, err := openLog(o)
	if err != nil {
		return nil, fmt.Errorf("--audit-log-path %s: %w", o.LogPath, err)
	}
	format := o.Format
	if format == "" {
		format = pluginlog.FormatJson
	}
	backend := &ignoreErrors{pluginlog.NewBackend(w, format, auditv1.SchemeGroupVersion)}
	return &Auditor{policy: policy.NewPolicyRuleEvaluator(p), sink: backend, closer: closer, enabled: true}, nil
}

// openLog opens the log file as kube-apiserver does: created 0600 in a
// 0700 directory, appended to, rotated by lumberjack when MaxSize is set.
func openLog(o Options) (io.Writer, io.Closer, error) {
	if o.LogPath == "-" {
		return os.Stdout, nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(o.LogPath), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if o.MaxSize == 0 {
		return f, f, nil
	}
	f.Close()
	l := &lumberjack.Logger{Filename: o.LogPath, MaxAge: o.MaxAge, MaxBackups: o.MaxBackups, MaxSize: o.MaxSize}
	return l, l, nil
}

// Close flushes and closes the log.
func (a *Auditor) Close() error {
	if a.sink != nil {
		a.sink.Shutdown()
	}
	if a.closer != nil {
		return a.closer.Close()
	}
	return nil
}

// Init is kube-apiserver's outermost filter: it gives the request its
// audit context and ID (a client's Audit-ID header, or a new UUID),
// answered in the Audit-Id header. Without a policy and a log no event is
// ever written, so the context is settled at level None at once: the
// annotations that authorization and admission add to every request's
// event (a map and a lock each) are then dropped as they are added, as for
// a request a policy audits at level None.
func (a *Auditor) Init(next http.Handler) http.Handler {
	if !a.enabled {
		next = unaudited(next)
	}
	return genericfilters.WithAuditInit(next)
}

// unaudited settles each request's audit context at level None.
func unaudited(next http.Handler) http.Handler {
	none := audit.RequestAuditConfig{Level: auditinternal.LevelNone}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ac := audit.AuditContextFrom(r.Context()); ac != nil {
			_ = ac.Init(none, nil) // fails only if already settled
		}
		next.ServeHTTP(w, r)
	})
}

// Audit logs the requests the policy selects: it goes just inside
// authentication (the policy matches users and groups) and outside
// impersonation (the event names both users). A request whose path did
// not parse (no RequestInfo) is not audited: kube-apiserver refuses it
// before auditing. longRunning says which requests stream (their
// ResponseStarted stage is logged).
func (a *Auditor) Audit(next http.Handler, longRunning func(*request.RequestInfo) bool) http.Handler {
	if !a.enabled {
		return next
	}
	check := func(_ *http.Request, info *request.RequestInfo) bool { return longRunning(info) }
	audited := genericfilters.WithAudit(a.capture(next, longRunning), a.sink, a.policy, check)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := request.RequestInfoFrom(r.Context()); !ok {
			next.ServeHTTP(w, r)
			return
		}
		audited.ServeHTTP(w, r)
	})
}

// FailedAuthentication wraps the handler that answers 401, so that
// refused credentials are logged (with the methods tried), as
// kube-apiserver's WithFailedAuthenticationAudit does.
func (a *Auditor) FailedAuthentication(failed http.Handler) http.Handler {
	if !a.enabled {
		return failed
	}
	audited := genericfilters.WithFailedAuthenticationAudit(failed, a.sink, a.policy)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := request.RequestInfoFrom(r.Context()); !ok {
			failed.ServeHTTP(w, r)
			return
		}
		audited.ServeHTTP(w, r)
	})
}

// ignoreErrors is kube-apiserver's "blocking" log mode: each event is
// written before the request goes on, and a write that fails does not
// fail the request.
type ignoreErrors struct{ audit.Backend }

func (b *ignoreErrors) ProcessEvents(events ...*auditinternal.Event) bool {
	b.Backend.ProcessEvents(events...)
	return true
}
