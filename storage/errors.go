package storage

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Sentinels for the conditions callers branch on. Every error the store
// returns for one of these conditions is an *Error for which errors.Is(err,
// ErrX) holds.
var (
	ErrNotFound           = errors.New("storage: not found")
	ErrAlreadyExists      = errors.New("storage: already exists")
	ErrConflict           = errors.New("storage: conflict")
	ErrInvalid            = errors.New("storage: invalid")
	ErrBadRequest         = errors.New("storage: bad request")
	ErrExpired            = errors.New("storage: resource version expired")
	ErrTooLargeRV         = errors.New("storage: too large resource version")
	ErrRequestTooLarge    = errors.New("storage: request entity too large")
	ErrInternal           = errors.New("storage: internal error")
	ErrWatchCacheNotReady = errors.New("storage: watch cache not ready")
)

// Error is the store's error type. It pairs a sentinel (for errors.Is) with
// the apimachinery StatusError an HTTP layer writes unchanged: Error
// implements apierrors.APIStatus, so apierrors.IsNotFound and friends work,
// and errors.As(err, &statusErr) yields the *apierrors.StatusError.
//
// Returning StatusError values is deliberate: the storage layer is where the
// reason, code, retry-after and inconsistent continue token are known, and
// building them once here means the HTTP layer cannot map them wrongly.
type Error struct {
	kind   error
	status *apierrors.StatusError
	cause  error
}

// Error returns the Status message.
func (e *Error) Error() string { return e.status.Error() }

// Status implements apierrors.APIStatus.
func (e *Error) Status() metav1.Status { return e.status.Status() }

// Is reports whether target is this error's sentinel.
func (e *Error) Is(target error) bool { return target == e.kind }

// Unwrap returns the StatusError and the underlying cause, if any.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.status}
	}
	return []error{e.status, e.cause}
}

func newError(kind error, status *apierrors.StatusError, cause error) *Error {
	return &Error{kind: kind, status: status, cause: cause}
}

func notFound(gr schema.GroupResource, name string) error {
	return newError(ErrNotFound, apierrors.NewNotFound(gr, name), nil)
}

func alreadyExists(gr schema.GroupResource, name string) error {
	return newError(ErrAlreadyExists, apierrors.NewAlreadyExists(gr, name), nil)
}

func conflict(gr schema.GroupResource, name string, why error) error {
	return newError(ErrConflict, apierrors.NewConflict(gr, name, why), why)
}

func badRequest(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return newError(ErrBadRequest, apierrors.NewBadRequest(msg), nil)
}

// listOptionsKind is the kind kube-apiserver names in 422 answers about list
// and watch options.
var listOptionsKind = schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}

func invalidListOptions(errs field.ErrorList) error {
	return newError(ErrInvalid, apierrors.NewInvalid(listOptionsKind, "", errs), errs.ToAggregate())
}

func invalidObject(gk schema.GroupKind, name string, errs field.ErrorList) error {
	return newError(ErrInvalid, apierrors.NewInvalid(gk, name, errs), errs.ToAggregate())
}

// expired is 410 Gone, reason Expired. continueToken, when set, is the
// "inconsistent" token that lets the client go on from the latest state.
func expired(msg, continueToken string, cause error) error {
	st := apierrors.NewResourceExpired(msg)
	st.ErrStatus.ListMeta.Continue = continueToken
	return newError(ErrExpired, st, cause)
}

// tooLargeResourceVersion is kube-apiserver's answer to a read at a revision
// the store has not reached: 504 Timeout with cause ResourceVersionTooLarge
// and Retry-After 1 second.
func tooLargeResourceVersion(want, have int64) error {
	// As k8s.io/apiserver/pkg/storage.NewTooLargeResourceVersionError:
	// NewTimeoutError's message begins "Timeout: ".
	st := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", want, have), 1)
	st.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return newError(ErrTooLargeRV, st, nil)
}

func requestTooLarge(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return newError(ErrRequestTooLarge, apierrors.NewRequestEntityTooLargeError(msg), nil)
}

// conversionFailed is kube-apiserver's answer to a write whose object its
// storage codec cannot convert to the storage version: the plain error
// its handlers turn into a 500 without a reason, worded as the converter
// words it. A converter's own Status passes unchanged.
func conversionFailed(err error) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return err
	}
	return newError(ErrInternal, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
		Code: http.StatusInternalServerError, Message: err.Error()}}, conversionError{err})
}

// internal wraps an unexpected failure (etcd unreachable, corrupt data) as a
// 500 that names what was being done.
func internal(cause error, format string, args ...any) error {
	if isNoSpace(cause) {
		return noSpace(cause)
	}
	err := fmt.Errorf(format+": %w", append(args, cause)...)
	return newError(ErrInternal, apierrors.NewInternalError(err), cause)
}
