package etcd

import "testing"

func TestFreePortsDiffer(t *testing.T) {
	for i := 0; i < 50; i++ {
		ports, err := freePorts(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ports[0] == ports[1] {
			t.Fatalf("freePorts gave one port twice: %v", ports)
		}
	}
}
