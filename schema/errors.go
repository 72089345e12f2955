package schema

import (
	"fmt"
	"regexp"
	"strconv"
)

// Error is a problem in a schema document: the file, the path of the offending
// value inside it ("definitions.Foo.properties.ports") and the rule it breaks.
type Error struct {
	File string // the document's name, as given to Load
	Path string // JSON path inside the document, empty for the whole document
	Err  error  // the rule broken
}

// Error returns "file: path: rule".
func (e *Error) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the rule broken.
func (e *Error) Unwrap() error { return e.Err }

// ruleError is a rule's message with the error that caused it, when the
// message reads better than the cause's own text.
type ruleError struct {
	msg string
	err error
}

func (e *ruleError) Error() string { return e.msg }
func (e *ruleError) Unwrap() error { return e.err }

// maxErrors bounds the errors one document reports.
const maxErrors = 20

// errorList collects a document's errors, in the order they are found.
type errorList struct {
	file    string
	errs    []error
	dropped int
}

func (l *errorList) add(path string, err error) {
	if len(l.errs) == maxErrors {
		l.dropped++
		return
	}
	l.errs = append(l.errs, &Error{File: l.file, Path: path, Err: err})
}

func (l *errorList) addf(path, format string, args ...any) {
	l.add(path, fmt.Errorf(format, args...))
}

// err returns the collected errors as one, or nil.
func (l *errorList) err() error {
	switch {
	case len(l.errs) == 0:
		return nil
	case len(l.errs) == 1:
		return l.errs[0]
	}
	errs := l.errs
	if l.dropped > 0 {
		errs = append(errs, fmt.Errorf("%s: %d more errors", l.file, l.dropped))
	}
	return &ErrorList{Errs: errs}
}

// ErrorList holds several errors found in one document, one per line.
type ErrorList struct {
	Errs []error
}

// Error returns the errors, one per line.
func (l *ErrorList) Error() string {
	s := ""
	for i, e := range l.Errs {
		if i > 0 {
			s += "\n"
		}
		s += e.Error()
	}
	return s
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l *ErrorList) Unwrap() []error { return l.Errs }

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_$/-]+$`)

// child returns the JSON path of key inside the value at path: "a.b", or
// `a["io.k8s.api.apps.v1.Deployment"]` when the key needs quoting.
func child(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index returns the JSON path of element i of the list at path.
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// describe names the JSON type of a decoded value, for type errors.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return "a number"
}
