package server

import (
	"strings"
	"testing"
)

// TestValidateServiceFlags: the Service flags are checked as kube-apiserver
// checks them, and named in the error.
func TestValidateServiceFlags(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*Options)
		wantErr string
	}{
		{name: "defaults", edit: func(*Options) {}},
		{name: "own ranges", edit: func(o *Options) { o.ServiceClusterIPRange, o.ServiceNodePortRange = "10.100.0.0/16", "31000-31999" }},
		{name: "range too large", edit: func(o *Options) { o.ServiceClusterIPRange = "10.0.0.0/8" },
			wantErr: "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12"},
		{name: "bad port range", edit: func(o *Options) { o.ServiceNodePortRange = "30000-x" },
			wantErr: `--service-node-port-range: "30000-x"`},
		{name: "advertise address", edit: func(o *Options) { o.AdvertiseAddress = "192.0.2.5" }},
		{name: "loopback advertise address", edit: func(o *Options) { o.AdvertiseAddress = "127.0.0.1" },
			wantErr: "--advertise-address: cannot use public IP 127.0.0.1 with endpoint reconciler: may not be in the loopback range"},
		{name: "quota", edit: func(o *Options) { o.QuotaBackendBytes = 8 << 20 }},
		{name: "negative watch cache bound", edit: func(o *Options) { o.WatchCacheSizeBytes = -1 },
			wantErr: "--watch-cache-size-bytes: -1 must not be negative (0: the default of 33554432)"},
		{name: "negative quota", edit: func(o *Options) { o.QuotaBackendBytes = -1 },
			wantErr: "--quota-backend-bytes: -1 must not be negative (0: etcd's default of 2 GiB)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			tc.edit(o)
			err := o.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestValidateAuthorizationFlags: --authorization-mode is checked as
// kube-apiserver checks it, with its messages.
func TestValidateAuthorizationFlags(t *testing.T) {
	for _, tc := range []struct {
		modes   []string
		webhook string
		wantErr string
	}{
		{modes: []string{"RBAC"}},
		{modes: []string{"Node", "RBAC"}},
		{modes: []string{"AlwaysAllow"}},
		{modes: []string{"Foo"}, wantErr: `authorization-mode "Foo" is not a valid mode`},
		{modes: []string{"RBAC", "RBAC"}, wantErr: `authorization-mode ["RBAC" "RBAC"] has mode specified more than once`},
		{modes: nil, wantErr: "at least one authorization-mode must be passed"},
		{modes: []string{"Webhook"}, wantErr: "authorization-mode Webhook's authorization config file not passed"},
		{modes: []string{"RBAC"}, webhook: "hook.kubeconfig",
			wantErr: "cannot specify --authorization-webhook-config-file without mode Webhook"},
		{modes: []string{"ABAC"}, wantErr: "authorization-mode ABAC's authorization policy file not passed"},
	} {
		o := NewOptions()
		o.AuthorizationModes, o.AuthorizationWebhookConfigFile = tc.modes, tc.webhook
		err := o.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
			t.Errorf("%q: got %v, want %q", tc.modes, err, tc.wantErr)
		}
	}
}

// TestValidateControllersFlag: --controllers is checked with the other
// flags, with kube-controller-manager's message.
func TestValidateControllersFlag(t *testing.T) {
	for _, tc := range []struct {
		controllers []string
		wantErr     string
	}{
		{controllers: []string{"*"}},
		{controllers: []string{"*", "-garbage-collector-controller", "-deployment-controller"}},
		{controllers: []string{"*", "-garbage-collecter"}, wantErr: `--controllers: "garbage-collecter" is not in the list of known controllers`},
	} {
		o := NewOptions()
		o.Controllers = tc.controllers
		err := o.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
			t.Errorf("%q: got %v, want %q", tc.controllers, err, tc.wantErr)
		}
	}
}
