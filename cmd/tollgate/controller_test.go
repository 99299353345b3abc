package main

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestControllerManagerOptions checks what the controller's flags become
// without reaching a cluster.
func TestControllerManagerOptions(t *testing.T) {
	if got := newControllerCmd().Flags().Lookup("pprof-addr").DefValue; got != "0" {
		t.Errorf("--pprof-addr default = %q, want \"0\" (disabled)", got)
	}
	o := controllerOptions{namespace: "argocd", metricsAddr: ":8080", healthAddr: ":8081", pprofAddr: "127.0.0.1:6060"}
	opts := controllerManagerOptions(o, nil)
	if opts.PprofBindAddress != o.pprofAddr || opts.Metrics.BindAddress != o.metricsAddr || opts.HealthProbeBindAddress != o.healthAddr {
		t.Errorf("manager addresses: pprof %q, metrics %q, health %q; want %q, %q, %q",
			opts.PprofBindAddress, opts.Metrics.BindAddress, opts.HealthProbeBindAddress, o.pprofAddr, o.metricsAddr, o.healthAddr)
	}

	tests := []struct {
		name    string
		qps     float32
		wantQPS float32
	}{
		{"unset: no client-side limit", 0, -1},
		{"set: kept", 50, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &rest.Config{Host: "https://127.0.0.1:1", QPS: tt.qps}
			if got := controllerRESTConfig(in).QPS; got != tt.wantQPS {
				t.Errorf("QPS = %v, want %v", got, tt.wantQPS)
			}
			if in.QPS != tt.qps {
				t.Errorf("the kubeconfig's config was modified: QPS %v", in.QPS)
			}
		})
	}
}
