package e2e

import (
	"debug/elf"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

// maxExported bounds the symbols strata-server may export dynamically: a
// cgo build exports cgo's own few (crosscall2, _cgo_panic,
// _cgo_topofstack); a build that links the plugin package exports every Go
// symbol, 387,958 of them.
const maxExported = 100

// TestServerBinaryExportsNoGoSymbols: strata-server built as README says
// (strataTags) links no Go plugin loader. Linked in (kubectl's kustomize
// has one), it makes the linker export every Go symbol: the binary grew
// by tens of megabytes and an idle, empty server kept more of it
// resident, for Go plugins upstream kubectl's release builds do not load
// either.
func TestServerBinaryExportsNoGoSymbols(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the built strata-server")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads strata-server's ELF dynamic symbol table")
	}
	bin := filepath.Join(filepath.Dir(strataBin), "strata-server")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		t.Fatalf("%s: dynamic symbols: %v", bin, err)
	}
	var exported []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			exported = append(exported, s.Name)
		}
	}
	if len(exported) > maxExported {
		t.Errorf("%s exports %d dynamic symbols (first %q), want at most %d: is the plugin package linked (built without -tags %s)?",
			bin, len(exported), exported[0], maxExported, strataTags)
	}
}
