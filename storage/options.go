package storage

import (
	"math"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// readMode is where and at which revision a read is served.
type readMode int

const (
	readLatest   readMode = iota // quorum read from etcd at the newest revision
	readAny                      // watch cache, any revision
	readNotOlder                 // watch cache, once it has reached rv
	readExact                    // etcd at exactly rv
	readContinue                 // etcd at the continue token's revision
)

// listPlan is a validated ListOptions.
type listPlan struct {
	mode  readMode
	rv    int64
	limit int64
	token continueToken
	pred  predicate
}

var matchPath = field.NewPath("resourceVersionMatch")

// parseResourceVersion parses a non-empty resourceVersion; anything but a
// non-negative integer is ErrBadRequest, with the words of kube-apiserver's
// storage (APIObjectVersioner.ParseResourceVersion), which answers them
// with a 500 on get.
func parseResourceVersion(rv string) (int64, error) {
	n, err := ParseResourceVersion(field.NewPath("resourceVersion"), rv)
	if err != nil {
		return 0, badRequest("%s", err.ToAggregate())
	}
	return n, nil
}

// ParseResourceVersion is kube-apiserver's parse of a resourceVersion (at
// path, for the error): an unsigned integer; strata's revisions stop at the
// largest int64.
func ParseResourceVersion(path *field.Path, rv string) (int64, field.ErrorList) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err == nil && n > math.MaxInt64 {
		_, err = strconv.ParseInt(rv, 10, 64)
	}
	if err != nil {
		return 0, field.ErrorList{field.Invalid(path, rv, err.Error())}
	}
	return int64(n), nil
}

// validateMatch returns the 422 errors kube-apiserver gives for
// resourceVersionMatch on lists.
func validateListMatch(o ListOptions) field.ErrorList {
	var errs field.ErrorList
	switch o.ResourceVersionMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
	default:
		return append(errs, field.NotSupported(matchPath, o.ResourceVersionMatch,
			[]string{string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
	}
	if o.SendInitialEvents != nil {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if o.ResourceVersionMatch == "" {
		return errs
	}
	if o.ResourceVersion == "" {
		errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
	}
	if o.Continue != "" {
		errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden when continue is provided"))
	}
	if o.ResourceVersionMatch == metav1.ResourceVersionMatchExact && o.ResourceVersion == "0" {
		errs = append(errs, field.Forbidden(matchPath, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
	}
	return errs
}

// planList applies the list rows of the resourceVersion table.
func (s *Store) planList(o ListOptions) (listPlan, error) {
	if errs := validateListMatch(o); len(errs) > 0 {
		return listPlan{}, invalidListOptions(errs)
	}
	pred, err := newPredicate(o.Label, o.Field, o.Fields)
	if err != nil {
		return listPlan{}, err
	}
	p := listPlan{pred: pred, limit: max(o.Limit, 0)}
	if o.Continue != "" {
		return s.planContinue(o, p)
	}
	if o.ResourceVersion == "" {
		p.mode = readLatest
		return p, nil
	}
	var errs field.ErrorList
	if p.rv, errs = ParseResourceVersion(field.NewPath("resourceVersion"), o.ResourceVersion); errs != nil {
		// kube-apiserver's list words it so (storage.ValidateListOptions).
		return listPlan{}, badRequest("invalid resource version: %s", errs.ToAggregate())
	}
	switch {
	case p.rv == 0:
		p.mode = readAny
	case o.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		p.mode = readExact
	case o.ResourceVersionMatch == "" && p.limit > 0:
		p.mode = readExact // the legacy rule: RV with limit is exact
	default:
		p.mode = readNotOlder
	}
	return p, nil
}

func (s *Store) planContinue(o ListOptions, p listPlan) (listPlan, error) {
	if o.ResourceVersion != "" && o.ResourceVersion != "0" {
		return listPlan{}, badRequest("specifying resource version is not allowed when using continue")
	}
	tok, err := decodeContinue(o.Continue)
	if err != nil {
		return listPlan{}, err
	}
	p.mode, p.token, p.rv = readContinue, tok, max(tok.RV, 0) // 0: the newest revision
	return p, nil
}

// watchStart is where a watch begins.
type watchStart int

const (
	startNow     watchStart = iota // changes after the cache's current revision
	startAfter                     // changes after rv (replayed from history)
	startInitial                   // initial state as ADDED, then changes
)

// watchPlan is a validated watch request.
type watchPlan struct {
	start       watchStart
	mode        readMode // for startInitial: readLatest, readAny or readNotOlder
	rv          int64
	endBookmark bool // send the initial-events-end bookmark
	pred        predicate
}

// planWatch applies the watch rows of the resourceVersion table.
func (s *Store) planWatch(o ListOptions) (watchPlan, error) {
	if errs := validateWatchOptions(o); len(errs) > 0 {
		return watchPlan{}, invalidListOptions(errs)
	}
	if o.Continue != "" {
		return watchPlan{}, badRequest("continue is not supported for watch")
	}
	pred, err := newPredicate(o.Label, o.Field, o.Fields)
	if err != nil {
		return watchPlan{}, err
	}
	p := watchPlan{pred: pred}
	if o.ResourceVersion != "" {
		// kube-apiserver's watch cache answers this with a 500 (the
		// versioner's error, which is no API status); a client's mistake
		// is a 400 here, in its words, as on get.
		if p.rv, err = parseResourceVersion(o.ResourceVersion); err != nil {
			return watchPlan{}, err
		}
	}
	initial := o.SendInitialEvents != nil && *o.SendInitialEvents
	legacy := o.SendInitialEvents == nil && p.rv == 0
	switch {
	case initial || legacy:
		p.start, p.endBookmark = startInitial, initial && o.AllowWatchBookmarks
		p.mode = readNotOlder
		if o.ResourceVersion == "" {
			p.mode = readLatest
		} else if p.rv == 0 {
			p.mode = readAny
		}
	case p.rv == 0:
		p.start = startNow
	default:
		p.start = startAfter
	}
	return p, nil
}

func validateWatchOptions(o ListOptions) field.ErrorList {
	var errs field.ErrorList
	switch o.ResourceVersionMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan:
	case metav1.ResourceVersionMatchExact:
		return append(errs, field.Forbidden(matchPath, `resourceVersionMatch "Exact" is forbidden for watch`))
	default:
		return append(errs, field.NotSupported(matchPath, o.ResourceVersionMatch,
			[]string{string(metav1.ResourceVersionMatchNotOlderThan), ""}))
	}
	sie := field.NewPath("sendInitialEvents")
	if o.SendInitialEvents != nil && o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		errs = append(errs, field.Forbidden(sie, `sendInitialEvents requires resourceVersionMatch "NotOlderThan"`))
	}
	if o.SendInitialEvents == nil && o.ResourceVersionMatch != "" {
		errs = append(errs, field.Forbidden(matchPath, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
	}
	// kube-apiserver v1.37 serves sendInitialEvents without bookmarks: the
	// initial events, then changes, with no initial-events-end bookmark.
	return errs
}
