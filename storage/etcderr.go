package storage

import (
	"errors"
	"net/http"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrNoSpace is etcd's refusal of a write once its database has reached
// its space quota (the NOSPACE alarm is raised): see SpaceGuard.
var ErrNoSpace = errors.New("storage: etcd database space exceeded")

// isNoSpace reports etcd's "mvcc: database space exceeded".
func isNoSpace(err error) bool {
	return errors.Is(err, rpctypes.ErrNoSpace) || errors.Is(err, rpctypes.ErrGRPCNoSpace)
}

// noSpace is kube-apiserver's answer to etcd's refusal: its storage passes
// etcd's error up unconverted, and the handler's ErrorToAPIStatus makes it
// a 500 with no reason and etcd's message.
func noSpace(cause error) error {
	st := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: rpctypes.ErrNoSpace.Error()}}
	return newError(ErrNoSpace, st, cause)
}

// isCompacted reports etcd's "required revision has been compacted".
func isCompacted(err error) bool {
	return errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrGRPCCompacted)
}

// isFutureRev reports etcd's "required revision is a future revision".
func isFutureRev(err error) bool {
	return errors.Is(err, rpctypes.ErrFutureRev) || errors.Is(err, rpctypes.ErrGRPCFutureRev)
}

// isRequestTooLarge reports etcd's "request is too large", or gRPC's
// client-side refusal to send a message over its size limit.
func isRequestTooLarge(err error) bool {
	if isNoSpace(err) { // the same gRPC code
		return false
	}
	if errors.Is(err, rpctypes.ErrRequestTooLarge) || errors.Is(err, rpctypes.ErrGRPCRequestTooLarge) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted
}
