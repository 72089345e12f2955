package fieldmanager

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// Config is what a Manager is built from: the kind's type converter, the
// scheme (or a CRD's converter) that converts between its versions and the
// hub, defaults and creates its objects, and the fields its strategy
// resets (they are never owned: spec for a status write, status for a
// main-resource write).
type Config struct {
	TypeConverter managedfields.TypeConverter
	Converter     runtime.ObjectConvertor
	Defaulter     runtime.ObjectDefaulter
	Creater       runtime.ObjectCreater
	// Kind is the served kind; Hub the version conversions go through
	// (the internal version for built-in kinds, the storage version for
	// custom ones).
	Kind schema.GroupVersionKind
	Hub  schema.GroupVersion
	// Subresource is "" for the resource itself, or "status" / "scale".
	Subresource string
	ResetFields map[fieldpath.APIVersion]fieldpath.Filter
	// Custom selects apiextensions-apiserver's variant (CRD versions
	// convert as unstructured objects).
	Custom bool
}

// Manager keeps the managedFields of one kind's objects (or one of its
// subresources) and applies configurations to them.
type Manager struct {
	fm        *managedfields.FieldManager
	kind      schema.GroupVersionKind
	converter runtime.ObjectConvertor
	creater   runtime.ObjectCreater
}

// New builds the manager kube-apiserver installs for the kind: the default
// chain (version check, last-applied annotation, capped update managers,
// manager info, structured merge).
func New(c Config) (*Manager, error) {
	build := managedfields.NewDefaultFieldManager
	if c.Custom {
		build = managedfields.NewDefaultCRDFieldManager
	}
	fm, err := build(c.TypeConverter, c.Converter, c.Defaulter, c.Creater, c.Kind, c.Hub, c.Subresource, c.ResetFields)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: %v: %w", c.Kind, err)
	}
	return &Manager{fm: fm, kind: c.Kind, converter: c.Converter, creater: c.Creater}, nil
}

// Empty is the live object a create starts from: an empty object of the
// kind, with no managedFields.
func (m *Manager) Empty() (runtime.Object, error) {
	obj, err := m.creater.New(m.kind)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: new %v: %w", m.kind, err)
	}
	return obj, nil
}

// Update records in obj's managedFields the fields manager changed from
// live to obj, and returns obj. Like kube-apiserver it never fails a write:
// managedFields it cannot compute are kept as they were.
func (m *Manager) Update(live, obj runtime.Object, manager string) runtime.Object {
	return m.fm.UpdateNoErrors(live, obj, manager)
}

// ApplyOptions are a server-side apply request's options.
type ApplyOptions struct {
	// Manager is the fieldManager query parameter (required; checked with
	// the other PatchOptions before Apply).
	Manager string
	Force   bool
	// FieldValidation is Strict, Warn (or empty) or Ignore: duplicate
	// fields in the configuration are an error, a warning, or neither.
	FieldValidation string
}

// Apply merges an applied configuration (YAML or JSON) into live (an
// object of the kind; a new, empty one to create) and returns the result in
// the served version with its managedFields, and the warnings to send.
// Conflicts with other managers are 409 as kube-apiserver words them.
func (m *Manager) Apply(live runtime.Object, config []byte, opts ApplyOptions) (runtime.Object, []string, error) {
	applied, strictErr, err := decodeConfig(config, opts.FieldValidation != "Ignore")
	if err != nil {
		return nil, nil, err
	}
	out, err := m.fm.Apply(live, applied, opts.Manager, opts.Force)
	if err != nil {
		return nil, nil, asStatus(err)
	}
	// As in kube-apiserver, a failed apply is answered before duplicate
	// fields are.
	var warnings []string
	if strictErr != nil {
		if opts.FieldValidation == "Strict" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", strictErr))
		}
		warnings = append(warnings, strictErr.Error())
	}
	served, err := m.converter.ConvertToVersion(out, m.kind.GroupVersion())
	if err != nil {
		return nil, nil, apierrors.NewInternalError(fmt.Errorf("fieldmanager: the applied %s to %s: %w", m.kind.Kind, m.kind.GroupVersion(), err))
	}
	return served, warnings, nil
}

// decodeConfig reads an applied configuration once: strictly when strict
// is set (strictErr then reports duplicate fields), and again leniently only
// when the strict read fails, so that the configuration is still applied
// and its duplicates reported after, as kube-apiserver reports them.
func decodeConfig(config []byte, strict bool) (applied *unstructured.Unstructured, strictErr, err error) {
	if applied, ok := decodeJSONConfig(config); ok {
		return applied, nil, nil
	}
	applied = &unstructured.Unstructured{}
	if strict {
		if strictErr = yaml.UnmarshalStrict(config, &applied.Object); strictErr == nil {
			return withObject(applied), nil, nil
		}
		applied.Object = nil
	}
	if err := yaml.Unmarshal(config, &applied.Object); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	return withObject(applied), strictErr, nil
}

// decodeJSONConfig reads a configuration that is one JSON object without
// duplicate fields — what client-go, kubectl and helm send — in a single
// JSON pass, to what the YAML reader makes of it (numbers as float64):
// the YAML reader parses it as YAML, converts it to JSON and parses that
// (a tenth of the apply handler's CPU in BenchmarkApplyDeployment).
// Anything else (YAML, duplicates, invalid JSON, JSON that YAML reads
// differently) is not read (false), and takes the YAML path, whose
// answers are kube-apiserver's.
func decodeJSONConfig(config []byte) (*unstructured.Unstructured, bool) {
	if trimmed := bytes.TrimLeft(config, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' || !yamlReadsAsJSON(config) {
		return nil, false
	}
	obj := map[string]any{}
	strictErrs, err := kjson.UnmarshalStrict(config, &obj, kjson.DisallowDuplicateFields)
	if err != nil || len(strictErrs) > 0 {
		return nil, false
	}
	floatNumbers(obj)
	return &unstructured.Unstructured{Object: obj}, true
}

// yamlReadsAsJSON reports whether YAML reads config's characters and
// escapes as JSON does (go-yaml's reader and scanner): every character one
// YAML allows and does not take for a line break (NEL, LS and PS fold in a
// quoted string), no tab (JSON's whitespace, but not YAML's indentation),
// no "\/" escape (unknown to YAML), no "\u" escape of a UTF-16 surrogate
// (an error to YAML, half a pair to JSON).
func yamlReadsAsJSON(config []byte) bool {
	for i := 0; i < len(config); {
		r, size := utf8.DecodeRune(config[i:])
		switch {
		case r == utf8.RuneError && size <= 1,
			r < 0x20 && r != '\n' && r != '\r', r == 0x7f,
			r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029, r >= 0xd800 && r < 0xe000, r == 0xfffe, r == 0xffff:
			return false
		case r == '\\' && i+1 < len(config):
			if !jsonEscapeReadsAsYAML(config[i+1:]) {
				return false
			}
			size = 2 // the escaped character is not read again
		}
		i += size
	}
	return true
}

// jsonEscapeReadsAsYAML reports whether the escape after a backslash
// (esc) means the same to YAML.
func jsonEscapeReadsAsYAML(esc []byte) bool {
	switch esc[0] {
	case '/':
		return false
	case 'u':
		if len(esc) < 5 {
			return false
		}
		// A surrogate is \uD800 to \uDFFF, in either case.
		hi, lo := esc[1]|0x20, esc[2]|0x20
		return hi != 'd' || !(lo >= '8' && lo <= '9' || lo >= 'a' && lo <= 'f')
	}
	return true
}

// floatNumbers turns the int64 numbers of a JSON value read with
// sigs.k8s.io/json into float64, as encoding/json reads them.
func floatNumbers(v any) any {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case map[string]any:
		for k, e := range v {
			v[k] = floatNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = floatNumbers(e)
		}
	}
	return v
}

// withObject gives a configuration of "null" or nothing at all an empty
// object.
func withObject(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	return u
}

// asStatus keeps the field manager's API errors (409 conflicts, 400 on a
// wrong apiVersion or kind) and turns a configuration the kind's schema
// cannot hold — a field it does not declare, a list item without its key —
// into 400: kube-apiserver answers these with 500 (kubernetes#122480,
// kubernetes#139253), though they are the client's mistake.
func asStatus(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	if strings.HasPrefix(err.Error(), "failed to create typed patch object") {
		return apierrors.NewBadRequest(err.Error())
	}
	return apierrors.NewInternalError(err)
}

// ManagerName is the manager a write is recorded under: the fieldManager
// query parameter, or else the user agent up to its first "/", without
// unprintable characters and cut to 128 bytes, as kube-apiserver derives
// it (kubectl's "kubectl/v1.37.2 (linux/amd64) ..." is "kubectl").
func ManagerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var buf bytes.Buffer
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > metavalidation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}
