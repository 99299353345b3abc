package main

import (
	"strings"
	"testing"
)

// TestUIFlags: the UI starts only with a way to sign people in that makes
// sense, whether served by tollgate ui or by the controller (--ui-addr);
// these fail before any connection to a cluster.
func TestUIFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ui"}, "no way to know who is signed in"},
		{[]string{"ui", "--insecure-local", "--addr", ":8080"}, "--insecure-local listens on loopback only"},
		{[]string{"ui", "--auth-proxy-groups-header", "X-G", "--insecure-local"}, "--auth-proxy-groups-header needs --auth-proxy-header"},
		{[]string{"ui", "--tls-cert-file", "c.pem"}, "--tls-cert-file and --tls-key-file go together"},
		{[]string{"ui", "--auth-proxy-header", "X-U", "--auth-proxy-cidrs", "10.0.0.0/33"}, `invalid --auth-proxy-cidrs "10.0.0.0/33"`},
		{[]string{"ui", "--insecure-local", "--tracking-method", "guess"}, `invalid --tracking-method "guess"`},
		{[]string{"ui", "--insecure-local", "--config", "testdata/no-such-config.yaml"}, "load config: "},
		{[]string{"controller", "--ui-addr", "127.0.0.1:0"}, "--ui-addr: no way to know who is signed in"},
		{[]string{"controller", "--ui-addr", "0.0.0.0:8080", "--insecure-local"}, "--ui-addr: --insecure-local listens on loopback only"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, tc.args...)
			if r.code != 2 || !strings.Contains(r.err, tc.want) {
				t.Errorf("exit %d, error %q; want exit 2 with %q", r.code, r.err, tc.want)
			}
		})
	}
}
