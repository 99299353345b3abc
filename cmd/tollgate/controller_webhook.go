package main

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/tollgate-dev/tollgate/engine/push"
)

// webhookSecretEnv and webhookGitLabSecretEnv may hold the Git webhook's
// secrets instead of the flags, so that they do not show in the process
// list.
const (
	webhookSecretEnv       = "TOLLGATE_WEBHOOK_SECRET"
	webhookGitLabSecretEnv = "TOLLGATE_WEBHOOK_GITLAB_SECRET"
)

// addPushWebhook serves the Git push webhook on every replica (it only sets
// an annotation; the leader reconciles). Without a secret there is none.
func addPushWebhook(mgr manager.Manager, o controllerOptions, m push.Metrics, log logr.Logger) error {
	srv, err := pushWebhookServer(mgr.GetClient(), o, m, log)
	if err != nil || srv == nil {
		return err
	}
	if err := mgr.Add(srv); err != nil {
		return fmt.Errorf("add git webhook server: %w", err)
	}
	return nil
}

// pushWebhookServer returns the server of the Git push webhook, or nil when
// --webhook-addr is 0 or no secret is set (which it logs).
func pushWebhookServer(c client.Client, o controllerOptions, m push.Metrics, log logr.Logger) (*manager.Server, error) {
	if o.webhookAddr == "" || o.webhookAddr == "0" {
		return nil, nil
	}
	h, err := push.NewHandler(c, push.Options{
		Namespace: o.namespace, ApplicationNamespaces: o.appNamespaces, ApplicationSetNamespaces: o.servedAppSetNamespaces(), Secret: o.webhookSecret,
		GitLabSecret: o.webhookGitLab,
	}, m, log.WithName("webhook"))
	if errors.Is(err, push.ErrNoSecret) {
		log.Info("Git push webhook off: no webhook secret set", "addr", o.webhookAddr, "secretEnv", webhookSecretEnv)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(push.Path, h)
	timeout := 30 * time.Second
	return &manager.Server{
		Name: "git-webhook",
		Server: &http.Server{
			Addr: o.webhookAddr, Handler: mux,
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: timeout, WriteTimeout: timeout, IdleTimeout: 2 * time.Minute,
		},
		ShutdownTimeout: &timeout,
	}, nil
}
