package apiserver

import (
	"fmt"
	"net/http"

	"golang.org/x/net/http2"
)

// ConfigureHTTP2 has srv serve HTTP/2 over TLS with golang.org/x/net's
// server, as kube-apiserver does, and its random write scheduler.
//
// The default scheduler, round robin, looks at every open stream's queue
// for each frame it writes: a connection carries up to 250 streams, and
// client-go puts a client's watches on one, so each event delivered cost
// a walk over the idle watches beside it: with a thousand watchers, as
// much CPU as the watch handlers themselves. The random scheduler keeps
// only the streams with frames to write,
// and picks among them in map order, which Go randomises.
func ConfigureHTTP2(srv *http.Server) error {
	h2 := &http2.Server{NewWriteScheduler: func() http2.WriteScheduler { return http2.NewRandomWriteScheduler() }}
	if err := http2.ConfigureServer(srv, h2); err != nil {
		return fmt.Errorf("configuring HTTP/2: %w", err)
	}
	return nil
}
