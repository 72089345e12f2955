// Package admission builds kube-apiserver's admission chain from the
// upstream plugins (the ones kube-apiserver registers, in its order and
// with its defaults, initialized on the server's shared informers and
// loopback client) and binds it to each write (registry.Admission).
package admission

import (
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	kubeoptions "k8s.io/kubernetes/pkg/kubeapiserver/options"
)

// Options are kube-apiserver's admission flags.
type Options struct {
	// Enable is --enable-admission-plugins: plugins run besides the
	// default ones.
	Enable []string
	// Disable is --disable-admission-plugins: default plugins not run.
	Disable []string
	// ConfigFile is --admission-control-config-file: an
	// AdmissionConfiguration with the plugins' own configuration.
	ConfigFile string
}

// upstream is kube-apiserver's registry of admission plugins with its
// order and defaults.
func upstream() *kubeoptions.AdmissionOptions { return kubeoptions.NewAdmissionOptions() }

// Validate refuses unknown and contradictory plugin names, in
// kube-apiserver's words ("enable-admission-plugins plugin \"X\" is
// unknown").
func (o Options) Validate() error {
	a := upstream()
	a.GenericAdmission.EnablePlugins = o.Enable
	a.GenericAdmission.DisablePlugins = o.Disable
	a.GenericAdmission.ConfigFile = o.ConfigFile
	return errors.Join(a.Validate()...)
}

// Enabled lists the plugins that run, in kube-apiserver's order: the
// defaults, less --disable-admission-plugins, with
// --enable-admission-plugins.
func (o Options) Enabled() []string {
	a := upstream().GenericAdmission
	off := sets.New(sets.List(a.DefaultOffPlugins)...).Insert(o.Disable...).Delete(o.Enable...)
	var names []string
	for _, name := range a.RecommendedPluginOrder {
		if !off.Has(name) {
			names = append(names, name)
		}
	}
	return names
}

// DefaultOn lists the plugins run by default, comma-separated, in order.
func DefaultOn() string { return strings.Join(Options{}.Enabled(), ", ") }

// NamespaceLifecycle says whether the NamespaceLifecycle plugin is on.
// strata checks namespaces itself (package apiserver), with the plugin's
// messages, so the chain never runs upstream's copy.
func (o Options) NamespaceLifecycle() bool {
	return slices.Contains(o.Enabled(), lifecycle.PluginName)
}
