package main

import (
	"testing"

	"github.com/chai2010/gettext-go"
)

// TestKubectlCatalogueUnread: kubectl's packages translate their texts as
// they are initialised, yet a strata-server process that does not run
// kubectl (this test's) never reads kubectl's message catalogue, which
// would have made "k8s" gettext's domain.
func TestKubectlCatalogueUnread(t *testing.T) {
	if domain := gettext.SetDomain(""); domain == "k8s" {
		t.Fatalf("gettext's domain is %q: kubectl's catalogue was read", domain)
	}
}
