// Package testenv gives a Go test an API server of its own: strata's API
// server, started in the test's process on an embedded etcd in a
// temporary directory, with the controllers that keep API objects
// consistent (the garbage collector, and the namespace cleanup strata's
// API does itself) and none that add objects to a test's namespaces.
//
//	func TestReconcile(t *testing.T) {
//		t.Parallel()
//		cfg := testenv.Start(t, testenv.CRDDirectoryPaths("../config/crd/bases"))
//		c, err := client.New(cfg, client.Options{})
//		...
//	}
//
// Every server listens on its own loopback port and keeps its data in its
// own directory, so tests that each start one may run in parallel. The
// server stops, and its directory goes, when the test ends (t.Cleanup).
//
// The package links the API server and client-go; it does not link
// kubectl.
package testenv
