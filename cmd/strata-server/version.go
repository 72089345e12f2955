package main

import (
	"runtime/debug"
	"strings"
	"sync/atomic"
	_ "unsafe" // go:linkname: kubectl's version lives in variables only the linker sets
)

// kubectl reads its version from package variables that only -ldflags -X
// sets: component-base's, which "kubectl version" prints and checks for
// skew, and client-go's, which names kubectl in its user agent. A plain
// "go build" leaves placeholders there (v0.0.0-master+$Format:%H$), so
// "kubectl version" warned about a skew against strata's own v1.37 server
// and every request said "kubectl/v0.0.0 ... kubernetes/$Format". strata
// fills them at start from its build information instead: the kubectl it
// embeds is k8s.io/kubectl v0.X.Y, the code of kubectl v1.X.Y. A build
// that did set them with -ldflags is left alone.

//go:linkname componentGitVersion k8s.io/component-base/version.gitVersion
var componentGitVersion string

//go:linkname componentGitMajor k8s.io/component-base/version.gitMajor
var componentGitMajor string

//go:linkname componentGitMinor k8s.io/component-base/version.gitMinor
var componentGitMinor string

//go:linkname componentDynamicVersion k8s.io/component-base/version.dynamicGitVersion
var componentDynamicVersion atomic.Value

//go:linkname clientGitVersion k8s.io/client-go/pkg/version.gitVersion
var clientGitVersion string

//go:linkname clientGitMajor k8s.io/client-go/pkg/version.gitMajor
var clientGitMajor string

//go:linkname clientGitMinor k8s.io/client-go/pkg/version.gitMinor
var clientGitMinor string

//go:linkname clientGitCommit k8s.io/client-go/pkg/version.gitCommit
var clientGitCommit string

// unversionedGitVersion is the placeholder both packages hold when no
// -ldflags set them.
const unversionedGitVersion = "v0.0.0-master+$Format:%H$"

// versionKubectl gives kubectl the version of the kubectl code inside,
// unless the linker gave it one.
func versionKubectl() {
	v, ok := embeddedKubectlVersion()
	if !ok {
		return
	}
	major, minor, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	if componentGitVersion == unversionedGitVersion {
		componentGitVersion, componentGitMajor, componentGitMinor = v, major, minor
		componentDynamicVersion.Store(v)
	}
	if clientGitVersion == unversionedGitVersion {
		// The user agent shows the commit's first 7 characters; there is
		// no Kubernetes commit to show, and "unknown" is what client-go
		// prints for none.
		clientGitVersion, clientGitMajor, clientGitMinor, clientGitCommit = v, major, minor, ""
	}
}

// embeddedKubectlVersion is v1.X.Y for the k8s.io/kubectl v0.X.Y this
// binary is built with.
func embeddedKubectlVersion() (string, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, dep := range info.Deps {
		if dep.Path != "k8s.io/kubectl" {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if rest, ok := strings.CutPrefix(dep.Version, "v0."); ok {
			return "v1." + rest, true
		}
	}
	return "", false
}
