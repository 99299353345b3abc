package main

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// TestPushWebhookNeedsSecret checks that --webhook-addr serves nothing
// without a secret, and says so in the log.
func TestPushWebhookNeedsSecret(t *testing.T) {
	if got := newControllerCmd().Flags().Lookup("webhook-addr").DefValue; got != ":8082" {
		t.Errorf("--webhook-addr default = %q, want \":8082\"", got)
	}
	tests := []struct {
		name     string
		addr     string
		secret   string
		wantAddr string
		wantLog  string
	}{
		{name: "no secret: off", addr: ":8082",
			wantLog: `"level"=0 "msg"="Git push webhook off: no webhook secret set" "addr"=":8082" "secretEnv"="TOLLGATE_WEBHOOK_SECRET"`},
		{name: "secret: served", addr: ":8082", secret: "s3cret", wantAddr: ":8082"},
		{name: "disabled", addr: "0", secret: "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs []string
			log := funcr.New(func(prefix, args string) { logs = append(logs, args) }, funcr.Options{})
			srv, err := pushWebhookServer(fake.NewClientBuilder().Build(), controllerOptions{webhookAddr: tt.addr, webhookSecret: tt.secret}, nil, log)
			if err != nil {
				t.Fatal(err)
			}
			gotAddr := ""
			if srv != nil {
				gotAddr = srv.Server.Addr
			}
			if gotAddr != tt.wantAddr {
				t.Errorf("server address = %q, want %q", gotAddr, tt.wantAddr)
			}
			if got := strings.Join(logs, "\n"); got != tt.wantLog {
				t.Errorf("log\n got: %s\nwant: %s", got, tt.wantLog)
			}
		})
	}
}
