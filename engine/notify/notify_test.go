package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

func TestParse(t *testing.T) {
	c, err := Parse(catalog(t, map[string]string{
		"service.webhook.hook": "url: https://hooks.example.com\nheaders:\n- {name: Authorization, value: Bearer $hook-token}\n",
		"service.slack":        "token: $slack-token\nusername: tollgate\n",
		"context":              "argocdUrl: https://argocd.example.com\n",
		"subscriptions":        "- recipients: [slack:ops]\n  triggers: [on-sync-failed]\n  selector: team=shop\n",
		"defaultTriggers":      "[on-sync-succeeded]\n",
	}), map[string][]byte{"hook-token": []byte("s3cret"), "slack-token": []byte("xoxb-1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Services["hook"].(*webhookService).opts.Headers[0].Value; got != "Bearer s3cret" {
		t.Errorf("webhook header %q, want the Secret's value in place of $hook-token", got)
	}
	if got := c.Services["slack"].(*slackService).opts.Token; got != "xoxb-1" {
		t.Errorf("slack token %q", got)
	}
	if len(c.Triggers) != 9 || c.Context["argocdUrl"] == "" || c.Subscriptions[0].selector.String() != "team=shop" {
		t.Errorf("parsed %d triggers, context %v, subscriptions %+v", len(c.Triggers), c.Context, c.Subscriptions)
	}
	for key, v := range map[string]string{
		"service.pagerduty":   "token: x\n",
		"service.webhook.a.b": "url: https://x\n",
		"service.webhook.bad": "url: https://x\nretries: 3\n",
		"trigger.broken":      "- when: app.status.(\n  send: [app-created]\n",
		"trigger.unsent":      "- when: \"true\"\n  send: [no-such-template]\n",
	} {
		if _, err := Parse(catalog(t, map[string]string{key: v}), nil); err == nil || !strings.Contains(err.Error(), key) && !strings.Contains(err.Error(), strings.TrimPrefix(key, "trigger.")) {
			t.Errorf("%s: error %v, want one naming the key", key, err)
		}
	}
}

// TestEvaluateOnce: a trigger fires once per oncePer value (the revision):
// the same state again sends nothing, a new revision sends again, and a
// trigger that does not hold sends nothing.
func TestEvaluateOnce(t *testing.T) {
	c, err := Parse(catalog(t, map[string]string{"service.webhook.hook": "url: https://hooks.example.com\n"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	due, state, errs := c.Evaluate(app(t, strings.ReplaceAll(succeeded, "REV", "r1")), nil, State{}, now)
	if len(errs) > 0 || len(due) != 1 || due[0].Trigger != "on-sync-succeeded" {
		t.Fatalf("first evaluation: due %+v, errors %v; want on-sync-succeeded once", due, errs)
	}
	if !strings.Contains(due[0].Notification.Message, "was synced at 2026-12-03T10:00:05Z to revision r1") {
		t.Errorf("message %q", due[0].Notification.Message)
	}
	if !strings.HasPrefix(due[0].Key, "r1:on-sync-succeeded:[0].") || !strings.HasSuffix(due[0].Key, ":hook:") {
		t.Errorf("state key %q, want Argo CD's <oncePer>:<trigger>:[<i>].<hash>:<service>:<recipient>", due[0].Key)
	}
	if due, _, _ := c.Evaluate(app(t, strings.ReplaceAll(succeeded, "REV", "r1")), nil, ParseState(state.String()), now); len(due) != 0 {
		t.Errorf("same revision again: due %+v, want nothing", due)
	}
	due, _, _ = c.Evaluate(app(t, strings.ReplaceAll(succeeded, "REV", "r2")), nil, state, now)
	if len(due) != 1 {
		t.Errorf("new revision: due %+v, want one", due)
	}

	// A project's subscription applies to its Applications.
	plain := app(t, strings.ReplaceAll(succeeded, "REV", "r3"))
	delete(plain["metadata"].(map[string]any), "annotations")
	project := map[string]any{"metadata": map[string]any{"annotations": map[string]any{Subscribe + "on-sync-succeeded.hook": ""}}}
	if due, _, _ := c.Evaluate(plain, project, State{}, now); len(due) != 1 {
		t.Errorf("project subscription: due %+v, want one", due)
	}
	if due, _, _ := c.Evaluate(plain, nil, State{}, now); len(due) != 0 {
		t.Errorf("no subscription: due %+v, want none", due)
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
	due, state, errs := c.Evaluate(a, nil, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	for _, want := range []string{"refused a revision of application shop", "revision bad1 refused:\n[no-latest-tag] Deployment/shop/web"} {
		if !strings.Contains(due[0].Notification.Message, want) {
			t.Errorf("message %q lacks %q", due[0].Notification.Message, want)
		}
	}
	if due, _, _ := c.Evaluate(a, nil, state, time.Now()); len(due) != 0 {
		t.Errorf("same revision again: %+v", due)
	}
	a["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["message"] = "revision bad2 refused:\n[no-latest-tag] Deployment/shop/web: ..."
	if due, _, _ := c.Evaluate(a, nil, state, time.Now()); len(due) != 1 {
		t.Errorf("another refused revision: %+v, want one", due)
	}
}

// TestSlackPayload: chat.postMessage gets Slack's documented fields: the
// token, the channel, the text, attachments as a JSON array of objects with
// title, title_link, color and fields, username and icon_emoji.
func TestSlackPayload(t *testing.T) {
	h := receiver.NewHTTP(t, []byte(`{"ok": true}`))
	c, err := Parse(catalog(t, map[string]string{
		"service.slack": "token: xoxb-1\napiURL: " + h.URL + "/api/\nusername: tollgate\nicon: ':rocket:'\n",
		"context":       "argocdUrl: https://argocd.example.com\n",
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "r1"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-sync-succeeded.slack": "deploys"}
	due, _, errs := c.Evaluate(a, nil, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	if err := c.Services["slack"].Send(t.Context(), due[0].Notification, due[0].Destination); err != nil {
		t.Fatal(err)
	}
	reqs := h.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/api/chat.postMessage" ||
		reqs[0].Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("requests %+v", reqs)
	}
	f, err := url.ParseQuery(string(reqs[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	if f.Get("token") != "xoxb-1" || f.Get("channel") != "deploys" || f.Get("username") != "tollgate" || f.Get("icon_emoji") != ":rocket:" ||
		!strings.HasPrefix(f.Get("text"), ":white_check_mark: Application shop was synced") {
		t.Errorf("form %v", f)
	}
	var attachments []struct {
		Title     string `json:"title"`
		TitleLink string `json:"title_link"`
		Color     string `json:"color"`
		Fields    []struct {
			Title string `json:"title"`
			Value string `json:"value"`
			Short bool   `json:"short"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(f.Get("attachments")), &attachments); err != nil {
		t.Fatalf("attachments %q: %v", f.Get("attachments"), err)
	}
	if len(attachments) != 1 || attachments[0].Title != "shop" || attachments[0].TitleLink != "https://argocd.example.com/applications/shop" ||
		attachments[0].Color != "#18be52" || len(attachments[0].Fields) != 2 || attachments[0].Fields[1].Value != "r1" {
		t.Errorf("attachments %+v", attachments)
	}

	// Slack's answer ok: false is an error.
	refusing := receiver.NewHTTP(t, []byte(`{"ok": false, "error": "channel_not_found"}`))
	c.Services["slack"].(*slackService).opts.APIURL = refusing.URL + "/"
	if err := c.Services["slack"].Send(t.Context(), due[0].Notification, due[0].Destination); err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Errorf("refused message: %v", err)
	}
}

// TestWebhook: the template's request for the service (method, path, body)
// with the configured headers and basic auth; a Slack incoming webhook is a
// webhook service posting Slack's JSON.
func TestWebhook(t *testing.T) {
	h := receiver.NewHTTP(t, nil)
	c, err := Parse(catalog(t, map[string]string{
		"service.webhook.slack-incoming": "url: " + h.URL + "/services/T0/B0/XXX\nheaders:\n- {name: Content-Type, value: application/json}\nbasicAuth: {username: u, password: p}\n",
		"template.app-sync-succeeded": `webhook:
  slack-incoming:
    method: POST
    body: '{"text": {{toJson (printf "Application %s synced" .app.metadata.name)}}}'
`,
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "r1"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-sync-succeeded.slack-incoming": ""}
	due, _, errs := c.Evaluate(a, nil, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	if err := c.Services["slack-incoming"].Send(t.Context(), due[0].Notification, due[0].Destination); err != nil {
		t.Fatal(err)
	}
	reqs := h.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	user, pass, _ := (&http.Request{Header: r.Header}).BasicAuth()
	if r.Method != "POST" || r.Path != "/services/T0/B0/XXX" || r.Header.Get("Content-Type") != "application/json" || user != "u" || pass != "p" ||
		string(r.Body) != `{"text": "Application shop synced"}` {
		t.Errorf("request %s %s %v %q", r.Method, r.Path, r.Header, r.Body)
	}
}

// TestEmail: an SMTP receiver gets one message with the subject and body
// of the template, from and to as configured.
func TestEmail(t *testing.T) {
	s := receiver.NewSMTP(t)
	c, err := Parse(catalog(t, map[string]string{
		"service.email": "host: " + s.Host + "\nport: " + strconv.Itoa(s.Port) + "\nfrom: tollgate@example.com\n",
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "r1"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-sync-succeeded.email": "ops@example.com, dev@example.com"}
	due, _, _ := c.Evaluate(a, nil, State{}, time.Now())
	if len(due) != 1 {
		t.Fatalf("due %+v", due)
	}
	if err := c.Services["email"].Send(t.Context(), due[0].Notification, due[0].Destination); err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].From != "tollgate@example.com" || strings.Join(msgs[0].To, ",") != "ops@example.com,dev@example.com" {
		t.Fatalf("messages %+v", msgs)
	}
	data := string(msgs[0].Data)
	for _, want := range []string{"Subject: Application shop was synced.", "To: ops@example.com, dev@example.com", "Content-Type: text/plain; charset=UTF-8", "Application shop was synced at"} {
		if !strings.Contains(data, want) {
			t.Errorf("message lacks %q:\n%s", want, data)
		}
	}
}

// flaky fails its first fails sends.
type flaky struct {
	fails int32
	calls atomic.Int32
}

func (f *flaky) Send(context.Context, Notification, Destination) error {
	if f.calls.Add(1) <= f.fails {
		return errors.New("receiver down")
	}
	return nil
}

// TestDispatcherRetries: a failing receiver is retried with backoff until
// it answers, while another is served at once.
func TestDispatcherRetries(t *testing.T) {
	results := make(chan error, 2)
	d := NewDispatcher(DispatcherOptions{Workers: 2, Attempts: 5, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		Result: func(_ Due, err error) { results <- err }}, logr.Discard())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = d.Run(ctx) }()
	down, up := &flaky{fails: 3}, &flaky{}
	c := &Config{Services: map[string]Service{"down": down, "up": up}}
	d.Enqueue(c, []Due{{Destination: Destination{Service: "down"}}, {Destination: Destination{Service: "up"}}})
	for range 2 {
		select {
		case err := <-results:
			if err != nil {
				t.Errorf("result %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no result")
		}
	}
	if down.calls.Load() != 4 || up.calls.Load() != 1 {
		t.Errorf("calls: down %d (want 4), up %d (want 1)", down.calls.Load(), up.calls.Load())
	}
}
