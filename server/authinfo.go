package server

import (
	"context"
	"fmt"
	"os"

	"github.com/stratadev/strata/bootstrap"
)

// startAuthenticationInfo publishes the kube-system ConfigMaps that
// kube-apiserver's post-start hooks keep for delegated authentication and
// legacy token tracking (bootstrap.AuthenticationInfo), on every replica
// as kube-apiserver runs them. It returns what stops them.
func startAuthenticationInfo(o *Options, sh *shared) (stop func(), err error) {
	var clientCA []byte
	if o.ClientCAFile != "" {
		if clientCA, err = os.ReadFile(o.ClientCAFile); err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
	}
	return bootstrap.AuthenticationInfo{Client: sh.client, ClientCA: clientCA}.Start()
}

func (s *starting) startAuthenticationInfo(context.Context) (err error) {
	s.stopAuthenticationInfo, err = startAuthenticationInfo(s.o, s.sh)
	return err
}
