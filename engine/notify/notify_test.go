package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/test/receiver"
)

// catalog is the data of config/notifications' ConfigMap with extra keys.
func catalog(t *testing.T, extra map[string]string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "notifications", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		cm.Data[k] = v
	}
	return cm.Data
}

// app is an Application as decoded JSON.
func app(t *testing.T, y string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const succeeded = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
  namespace: argocd
  annotations:
    notifications.argoproj.io/subscribe.on-sync-succeeded.hook: ""
    notifications.argoproj.io/subscribe.on-sync-failed.hook: ""
spec: {project: default}
status:
  sync: {status: Synced, revision: REV}
  health: {status: Healthy}
  operationState:
    phase: Succeeded
    startedAt: "2026-12-03T10:00:00Z"
    finishedAt: "2026-12-03T10:00:05Z"
    syncResult: {revision: REV}
`

// TestParse: the services are built with the Secret's values in place of
// their $references; a configuration that does not parse, or whose
// service cannot be built, is refused with an error naming the key.
func TestParse(t *testing.T) {
	h := receiver.NewHTTP(t, nil)
	c, err := Parse(catalog(t, map[string]string{
		"service.webhook.hook":        "url: " + h.URL + "\nheaders:\n- {name: Authorization, value: Bearer $hook-token}\n",
		"template.app-sync-succeeded": "message: synced\n",
	}), map[string][]byte{"hook-token": []byte("s3cret")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Service("hook").Send(services.Notification{Message: "m"}, Destination{Service: "hook"}); err != nil {
		t.Fatal(err)
	}
	if got := h.Requests()[0].Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("webhook header %q, want the Secret's value in place of $hook-token", got)
	}
	for key, v := range map[string]string{
		"service.webhook.a.b":    "url: https://x\n",
		"service.teams":          "recipientUrls: [not, a, map]\n",
		"service.github":         "appID: not-a-number\ninstallationID: 1\nprivateKey: x\n",
		"service.carrier-pigeon": "{}\n",
		"trigger.broken":         "- when: app.status.(\n  send: [app-created]\n",
		"template.broken":        "message: '{{.app.metadata.name'\n",
	} {
		_, err := Parse(catalog(t, map[string]string{key: v}), nil)
		name := key[strings.LastIndex(key, ".")+1:]
		if err == nil || !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), strings.Split(key, ".")[1]) {
			t.Errorf("%s: error %v, want one naming it", key, err)
		}
	}
}

// TestEvaluateOnce: a trigger fires once per oncePer value (the revision):
// the same state again sends nothing, a new revision sends again, and a
// trigger that does not hold sends nothing; subscriptions come from the
// Application, its project, and the ConfigMap (by label selector).
func TestEvaluateOnce(t *testing.T) {
	c, err := Parse(catalog(t, map[string]string{
		"service.webhook.hook": "url: https://hooks.example.com\n",
		"subscriptions":        "- recipients: [hook]\n  triggers: [on-sync-succeeded]\n  selector: team=shop\n",
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	in := func(rev string) Input { return Input{App: app(t, strings.ReplaceAll(succeeded, "REV", rev))} }
	due, state, errs := c.Evaluate(in("r1"), State{}, now)
	if len(errs) > 0 || len(due) != 1 || due[0].Trigger != "on-sync-succeeded" {
		t.Fatalf("first evaluation: due %+v, errors %v; want on-sync-succeeded once", due, errs)
	}
	if !strings.Contains(due[0].Notification.Message, "was synced at 2026-12-03T10:00:05Z to revision r1") {
		t.Errorf("message %q", due[0].Notification.Message)
	}
	if !strings.HasPrefix(due[0].Key, "r1:on-sync-succeeded:[0].") || !strings.HasSuffix(due[0].Key, ":hook:") {
		t.Errorf("state key %q, want Argo CD's <oncePer>:<trigger>:[<i>].<hash>:<service>:<recipient>", due[0].Key)
	}
	if due, _, _ := c.Evaluate(in("r1"), ParseState(state.String()), now); len(due) != 0 {
		t.Errorf("same revision again: due %+v, want nothing", due)
	}
	if due, _, _ = c.Evaluate(in("r2"), state, now); len(due) != 1 {
		t.Errorf("new revision: due %+v, want one", due)
	}

	// A project's subscription applies to its Applications.
	plain := in("r3")
	delete(plain.App["metadata"].(map[string]any), "annotations")
	plain.Project = map[string]any{"metadata": map[string]any{"annotations": map[string]any{Subscribe + "on-sync-succeeded.hook": ""}}}
	if due, _, _ := c.Evaluate(plain, State{}, now); len(due) != 1 {
		t.Errorf("project subscription: due %+v, want one", due)
	}
	plain.Project = nil
	if due, _, _ := c.Evaluate(plain, State{}, now); len(due) != 0 {
		t.Errorf("no subscription: due %+v, want none", due)
	}
	// The ConfigMap's subscription, by the Application's labels.
	plain.App["metadata"].(map[string]any)["labels"] = map[string]any{"team": "shop"}
	if due, _, _ := c.Evaluate(plain, State{}, now); len(due) != 1 {
		t.Errorf("ConfigMap subscription: due %+v, want one", due)
	}
	// Argo CD's subscriptions annotation.
	delete(plain.App["metadata"].(map[string]any), "labels")
	plain.App["metadata"].(map[string]any)["annotations"] = map[string]any{
		"notifications.argoproj.io/subscriptions": "- trigger: [on-sync-succeeded]\n  destinations:\n  - {service: hook, recipients: [ops]}\n",
	}
	if due, _, _ := c.Evaluate(plain, State{}, now); len(due) != 1 {
		t.Errorf("subscriptions annotation: due %+v, want one", due)
	}
}

// TestEvaluateErrors: a destination whose service is not configured, or a
// template that fails, is an error for that notification alone, and is
// not recorded, so that it is tried again.
func TestEvaluateErrors(t *testing.T) {
	c, err := Parse(catalog(t, map[string]string{
		"service.webhook.hook":        "url: https://hooks.example.com\n",
		"template.app-sync-succeeded": "message: '{{call .sync.GetInfoItem .app \"missing\"}}'\n",
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "r1"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{
		Subscribe + "on-sync-succeeded.hook": "", Subscribe + "on-sync-failed.nowhere": "", Subscribe + "on-sync-succeeded.nowhere": "",
	}
	due, state, errs := c.Evaluate(Input{App: a}, State{}, time.Now())
	if len(due) != 0 || len(state) != 0 || len(errs) != 2 {
		t.Fatalf("due %+v, state %v, errors %v; want two errors and nothing recorded", due, state, errs)
	}
	for _, want := range []string{"notification service 'nowhere' is not supported", `has no info item "missing"`} {
		if !strings.Contains(errs[0].Error()+errs[1].Error(), want) {
			t.Errorf("errors %v lack %q", errs, want)
		}
	}
}

// TestPolicyViolationTrigger: on-policy-violation fires once per refused
// revision with the revision and the rule lines in the message.
func TestPolicyViolationTrigger(t *testing.T) {
	c, err := Parse(catalog(t, map[string]string{"service.webhook.hook": "url: https://hooks.example.com\n"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
  annotations: {notifications.argoproj.io/subscribe.on-policy-violation.hook: ""}
status:
  sync: {status: Synced, revision: good1}
  conditions:
  - type: PolicyViolation
    message: "revision bad1 refused:\n[no-latest-tag] Deployment/shop/web: container web uses image nginx:latest"
`)
	due, state, errs := c.Evaluate(Input{App: a}, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	for _, want := range []string{"refused a revision of application shop", "revision bad1 refused:\n[no-latest-tag] Deployment/shop/web"} {
		if !strings.Contains(due[0].Notification.Message, want) {
			t.Errorf("message %q lacks %q", due[0].Notification.Message, want)
		}
	}
	if due, _, _ := c.Evaluate(Input{App: a}, state, time.Now()); len(due) != 0 {
		t.Errorf("same revision again: %+v", due)
	}
	a["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["message"] = "revision bad2 refused:\n[no-latest-tag] Deployment/shop/web: ..."
	if due, _, _ := c.Evaluate(Input{App: a}, state, time.Now()); len(due) != 1 {
		t.Errorf("another refused revision: %+v, want one", due)
	}
}

// flaky fails its first fails sends.
type flaky struct {
	fails int32
	err   error
	calls atomic.Int32
}

func (f *flaky) Send(services.Notification, services.Destination) error {
	if f.calls.Add(1) <= f.fails {
		return f.err
	}
	return nil
}

// TestDispatcherRetries: a failing receiver is retried with backoff until
// it answers, while another is served at once; an error notifications-engine
// says not to retry (too many GitHub commit statuses) is not.
func TestDispatcherRetries(t *testing.T) {
	results := make(chan error, 3)
	d := NewDispatcher(DispatcherOptions{Workers: 2, Attempts: 5, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		Result: func(_ Due, err error) { results <- err }}, logr.Discard())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = d.Run(ctx) }()
	down, up := &flaky{fails: 3, err: errors.New("receiver down")}, &flaky{}
	full := &flaky{fails: 5, err: &services.TooManyGitHubCommitStatusesError{Sha: "abc", Context: "cd"}}
	c := &Config{services: map[string]services.NotificationService{"down": down, "up": up, "full": full}}
	d.Enqueue(c, []Due{{Destination: Destination{Service: "down"}}, {Destination: Destination{Service: "up"}}, {Destination: Destination{Service: "full"}}})
	failed := 0
	for range 3 {
		select {
		case err := <-results:
			if err != nil {
				failed++
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no result")
		}
	}
	if failed != 1 || down.calls.Load() != 4 || up.calls.Load() != 1 || full.calls.Load() != 1 {
		t.Errorf("%d failed (want 1); calls: down %d (want 4), up %d (want 1), full %d (want 1)", failed, down.calls.Load(), up.calls.Load(), full.calls.Load())
	}
}
