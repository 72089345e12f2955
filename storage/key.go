package storage

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// resourcePrefix is "{prefix}/{group}/{resource}/", or "{prefix}/{resource}/"
// for the core group, as kube-apiserver lays out etcd.
func resourcePrefix(prefix string, gr schema.GroupResource) string {
	prefix = strings.TrimSuffix(prefix, "/")
	if gr.Group == "" {
		return prefix + "/" + gr.Resource + "/"
	}
	return prefix + "/" + gr.Group + "/" + gr.Resource + "/"
}

// listPrefix is the key prefix of a list or watch over namespace ("" = all).
func (s *Store) listPrefix(namespace string) (string, error) {
	if namespace == "" {
		return s.prefix, nil
	}
	if err := s.checkNamespace(namespace); err != nil {
		return "", err
	}
	return s.prefix + namespace + "/", nil
}

// objectKey is the etcd key of one object, after checking the namespace and
// name against the DNS-1123 rules.
func (s *Store) objectKey(namespace, name string) (string, error) {
	if err := s.checkNamespace(namespace); err != nil {
		return "", err
	}
	if name == "" {
		return "", badRequest("%s: a name is required", s.cfg.Resource)
	}
	// kube-apiserver's key functions accept any name that is one path
	// segment (ClusterTrustBundles have colons in theirs); each kind's
	// validation judges the rest.
	if msgs := path.IsValidPathSegmentName(name); len(msgs) > 0 {
		return "", badRequest("%s name %q: %s", s.cfg.Resource, name, strings.Join(msgs, "; "))
	}
	if namespace == "" {
		return s.prefix + name, nil
	}
	return s.prefix + namespace + "/" + name, nil
}

func (s *Store) checkNamespace(namespace string) error {
	if !s.cfg.Namespaced {
		if namespace != "" {
			return badRequest("%s is cluster-scoped: namespace %q must be empty", s.cfg.Resource, namespace)
		}
		return nil
	}
	if namespace == "" {
		return badRequest("%s is namespaced: a namespace is required", s.cfg.Resource)
	}
	if isDNS1123Label(namespace) {
		return nil
	}
	msgs := validation.IsDNS1123Label(namespace)
	return badRequest("%s namespace %q: %s", s.cfg.Resource, namespace, strings.Join(msgs, "; "))
}

// isDNS1123Label is validation.IsDNS1123Label's rule without its regular
// expression, which every request naming a namespace would run (a
// measurable share of a consistent GET's CPU): at most 63 lower-case letters, digits and '-',
// starting and ending with a letter or digit. Failures take the upstream
// function, for its messages.
func isDNS1123Label(s string) bool {
	if len(s) == 0 || len(s) > validation.DNS1123LabelMaxLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}
