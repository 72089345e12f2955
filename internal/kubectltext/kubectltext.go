// Package kubectltext leaves kubectl's message catalogue unread in a
// process that does not run kubectl. kubectl's packages translate their
// help texts as they are initialised, and the first translation reads the
// catalogue: a noticeable share of every strata-server start's
// initialisation time and memory, for texts that only `strata kubectl`
// prints.
//
// Import it (for its effect) from a main package that also runs other
// commands. Its initialisation comes before any of kubectl's packages
// that translate: those import kubectl's i18n package, as this one does,
// and Go initialises the packages ready at each step in the order of their
// import paths ("github.com/stratadev/..." before "k8s.io/...").
package kubectltext

import (
	"os"

	"k8s.io/kubectl/pkg/util/i18n"
)

// kubectlCommand is the argument that makes strata-server run kubectl.
const kubectlCommand = "kubectl"

func init() {
	load := i18n.LoadTranslationsFunc
	// An error means a translation was asked for already: nothing to save.
	_ = i18n.SetLoadTranslationsFunc(func() error {
		if Needed(os.Args) {
			return load()
		}
		return nil // texts stay as written (kubectl's default, English)
	})
}

// Needed reports whether a process run with args prints kubectl's texts.
func Needed(args []string) bool {
	return len(args) > 1 && args[1] == kubectlCommand
}
