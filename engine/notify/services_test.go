package notify

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/tollgate-dev/tollgate/test/receiver"
)

// sendOne evaluates the succeeded Application subscribed to
// on-sync-succeeded by service and recipient, with the ConfigMap's extra
// keys (template.app-sync-succeeded is message plus tmpl, the service's
// part), and sends the one notification due.
func sendOne(t *testing.T, extra map[string]string, service, recipient, tmpl string) {
	t.Helper()
	data := catalog(t, extra)
	data["template.app-sync-succeeded"] = "message: Application {{.app.metadata.name}} synced.\n" + tmpl
	data["context"] = "argocdUrl: https://argocd.example.com\n"
	c, err := Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "0123456789abcdef0123456789abcdef01234567"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-sync-succeeded." + service: recipient}
	a["spec"].(map[string]any)["source"] = map[string]any{"repoURL": "git@github.com:shop-org/shop.git"}
	due, _, errs := c.Evaluate(Input{App: a}, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	if err := c.Service(service).Send(due[0].Notification, due[0].Destination); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// request is what a receiver got, as the tests compare it.
type request struct {
	Method, Path string
	Body         map[string]any
}

// requests are h's requests with their JSON bodies decoded.
func requests(t *testing.T, h *receiver.HTTP) []request {
	t.Helper()
	var out []request
	for _, r := range h.Requests() {
		var body map[string]any
		if len(r.Body) > 0 {
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("%s %s body %q: %v", r.Method, r.Path, r.Body, err)
			}
		}
		out = append(out, request{Method: r.Method, Path: r.Path, Body: body})
	}
	return out
}

// pick keeps the keys of m named by keys (dotted for nested maps).
func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		var v any = m
		for _, p := range strings.Split(k, ".") {
			mm, _ := v.(map[string]any)
			v = mm[p]
		}
		out[k] = v
	}
	return out
}

// message is the message of sendOne's template.
const message = "Application shop synced."

// TestServices: each service Argo CD's documentation configures in
// argocd-notifications-cm is built by notifications-engine from its
// service.<type> key and sends what Argo CD sends to a receiver in the
// test (the services take their API's URL), from the catalog's template
// with the service's part added.
func TestServices(t *testing.T) {
	t.Run("mattermost", func(t *testing.T) {
		h := receiver.NewHTTP(t, []byte(`{"id": "p1"}`))
		sendOne(t, map[string]string{"service.mattermost": "apiURL: " + h.URL + "\ntoken: mm-token\n"}, "mattermost", "channel-1",
			"mattermost:\n  attachments: '[{\"title\": \"{{.app.metadata.name}}\", \"color\": \"#18be52\"}]'\n")
		got := requests(t, h)
		want := []request{{Method: "POST", Path: "/api/v4/posts", Body: map[string]any{
			"channel_id": "channel-1", "message": message,
			"props": map[string]any{"attachments": []any{map[string]any{"title": "shop", "color": "#18be52"}}},
		}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if a := h.Requests()[0].Header.Get("Authorization"); a != "Bearer mm-token" {
			t.Errorf("Authorization %q", a)
		}
	})
	t.Run("teams", func(t *testing.T) {
		h := receiver.NewHTTP(t, []byte("1"))
		sendOne(t, map[string]string{"service.teams": "recipientUrls:\n  deploys: " + h.URL + "/webhookb2/x\n"}, "teams", "deploys",
			"teams:\n  title: Synced {{.app.metadata.name}}\n  themeColor: '#000080'\n  facts: '[{\"name\": \"Revision\", \"value\": \"{{.app.status.sync.revision}}\"}]'\n")
		got := requests(t, h)
		if len(got) != 1 || got[0].Path != "/webhookb2/x" {
			t.Fatalf("requests %+v", got)
		}
		want := map[string]any{"@type": "MessageCard", "title": "Synced shop", "themeColor": "#000080", "text": message}
		if diff := cmp.Diff(want, pick(got[0].Body, "@type", "title", "themeColor", "text")); diff != "" {
			t.Errorf("card (-want +got):\n%s", diff)
		}
		facts, _ := json.Marshal(got[0].Body["sections"])
		if !strings.Contains(string(facts), `{"name":"Revision","value":"0123456789abcdef0123456789abcdef01234567"}`) {
			t.Errorf("sections %s lack the revision fact", facts)
		}
	})
	t.Run("googlechat", func(t *testing.T) {
		h := receiver.NewHTTP(t, []byte(`{}`))
		sendOne(t, map[string]string{"service.googlechat": "webhooks:\n  deploys: " + h.URL + "/v1/spaces/S/messages?key=k\n"}, "googlechat", "deploys",
			"googlechat:\n  threadKey: '{{.app.metadata.name}}'\n")
		got := h.Requests()
		if len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/v1/spaces/S/messages" {
			t.Fatalf("requests %+v", got)
		}
		q, _ := url.ParseQuery(got[0].Query)
		if q.Get("key") != "k" || q.Get("threadKey") != "shop" || !strings.Contains(string(got[0].Body), `"text":"`+message) {
			t.Errorf("query %q body %s", got[0].Query, got[0].Body)
		}
	})
	t.Run("opsgenie", func(t *testing.T) {
		h := receiver.NewHTTP(t, []byte(`{"result": "Request will be processed", "took": 0.1, "requestId": "r1"}`))
		u, _ := url.Parse(h.URL)
		sendOne(t, map[string]string{"service.opsgenie": "apiUrl: " + u.Host + "\napiKeys:\n  ops-team: og-key\n"}, "opsgenie", "ops-team",
			"opsgenie:\n  description: '{{.app.metadata.name}} synced'\n  priority: P3\n  alias: '{{.app.metadata.name}}'\n  tags: [cd]\n")
		got := requests(t, h)
		if len(got) != 1 || got[0].Path != "/v2/alerts" {
			t.Fatalf("requests %+v", got)
		}
		want := map[string]any{"message": message, "description": "shop synced", "priority": "P3", "alias": "shop", "tags": []any{"cd"}}
		if diff := cmp.Diff(want, pick(got[0].Body, "message", "description", "priority", "alias", "tags")); diff != "" {
			t.Errorf("alert (-want +got):\n%s", diff)
		}
		if a := h.Requests()[0].Header.Get("Authorization"); a != "GenieKey og-key" {
			t.Errorf("Authorization %q", a)
		}
	})
	t.Run("alertmanager", func(t *testing.T) {
		h := receiver.NewHTTP(t, nil)
		u, _ := url.Parse(h.URL)
		sendOne(t, map[string]string{"service.alertmanager": "targets: [" + u.Host + "]\nscheme: http\n"}, "alertmanager", "",
			"alertmanager:\n  labels: {app: '{{.app.metadata.name}}', severity: info}\n  annotations: {summary: synced}\n")
		got := h.Requests()
		if len(got) != 1 || got[0].Method != "POST" || got[0].Path != "/api/v2/alerts" {
			t.Fatalf("requests %+v", got)
		}
		var alerts []map[string]any
		if err := json.Unmarshal(got[0].Body, &alerts); err != nil || len(alerts) != 1 {
			t.Fatalf("alerts %s: %v", got[0].Body, err)
		}
		want := map[string]any{"labels": map[string]any{"alertname": "app-sync-succeeded", "app": "shop", "severity": "info"}, "annotations": map[string]any{"summary": "synced"},
			"generatorURL": "https://github.com/shop-org/shop.git"}
		if diff := cmp.Diff(want, pick(alerts[0], "labels", "annotations", "generatorURL")); diff != "" {
			t.Errorf("alert (-want +got):\n%s", diff)
		}
	})
	t.Run("grafana", func(t *testing.T) {
		h := receiver.NewHTTP(t, []byte(`{"id": 1}`))
		sendOne(t, map[string]string{"service.grafana": "apiUrl: " + h.URL + "/api\napiKey: gr-key\n"}, "grafana", "tollgate|shop", "")
		got := requests(t, h)
		if len(got) != 1 || got[0].Path != "/api/annotations" {
			t.Fatalf("requests %+v", got)
		}
		if diff := cmp.Diff(map[string]any{"text": message, "tags": []any{"tollgate", "shop"}}, pick(got[0].Body, "text", "tags")); diff != "" {
			t.Errorf("annotation (-want +got):\n%s", diff)
		}
		if a := h.Requests()[0].Header.Get("Authorization"); a != "Bearer gr-key" {
			t.Errorf("Authorization %q", a)
		}
	})
	t.Run("github", testGitHub)
	t.Run("telegram", testTelegram)
	t.Run("pagerdutyv2", testPagerDutyV2)
}

// testGitHub: a commit status and a deployment with its status, through
// GitHub's API (an Enterprise base URL in the test) with a GitHub App's
// installation token.
func testGitHub(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	h := receiver.NewHTTPAnswers(t, map[string][]byte{
		"POST /api/v3/app/installations/7/access_tokens": []byte(`{"token": "ghs_installation", "expires_at": "2099-01-01T00:00:00Z"}`),
		"GET /api/v3/repos/shop-org/shop/deployments":    []byte(`[]`),
		"POST /api/v3/repos/shop-org/shop/deployments":   []byte(`{"id": 42}`),
	}, []byte(`{}`))
	cfg := "appID: 1\ninstallationID: 7\nenterpriseBaseURL: " + h.URL + "/api/v3\nprivateKey: |\n  " + strings.ReplaceAll(strings.TrimSpace(string(pemKey)), "\n", "\n  ") + "\n"
	sendOne(t, map[string]string{"service.github": cfg}, "github", "", `github:
  repoURLPath: '{{.app.spec.source.repoURL}}'
  revisionPath: '{{.app.status.operationState.syncResult.revision}}'
  status:
    state: success
    label: continuous-delivery/{{.app.metadata.name}}
    targetURL: '{{.context.argocdUrl}}/applications/{{.app.metadata.name}}?operation=true'
  deployment:
    state: success
    environment: production
    environmentURL: https://{{.app.metadata.name}}.example.com
    logURL: '{{.context.argocdUrl}}/applications/{{.app.metadata.name}}?operation=true'
    requiredContexts: []
`)
	const sha = "0123456789abcdef0123456789abcdef01234567"
	got := requests(t, h)
	var paths []string
	for _, r := range got {
		paths = append(paths, r.Method+" "+r.Path)
	}
	wantPaths := []string{
		"POST /api/v3/app/installations/7/access_tokens",
		"POST /api/v3/repos/shop-org/shop/statuses/" + sha,
		"GET /api/v3/repos/shop-org/shop/deployments",
		"POST /api/v3/repos/shop-org/shop/deployments",
		"POST /api/v3/repos/shop-org/shop/deployments/42/statuses",
	}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
	status := map[string]any{"state": "success", "context": "continuous-delivery/shop", "description": message,
		"target_url": "https://argocd.example.com/applications/shop?operation=true"}
	if diff := cmp.Diff(status, got[1].Body); diff != "" {
		t.Errorf("commit status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"ref": sha, "environment": "production"}, pick(got[3].Body, "ref", "environment")); diff != "" {
		t.Errorf("deployment (-want +got):\n%s", diff)
	}
	depStatus := map[string]any{"state": "success", "environment": "production", "environment_url": "https://shop.example.com"}
	if diff := cmp.Diff(depStatus, pick(got[4].Body, "state", "environment", "environment_url")); diff != "" {
		t.Errorf("deployment status (-want +got):\n%s", diff)
	}
	if a := h.Requests()[1].Header.Get("Authorization"); a != "token ghs_installation" {
		t.Errorf("Authorization %q, want the installation token", a)
	}
}

// redirect sends the requests for host to target (an httptest server).
type redirect struct {
	host   string
	target *url.URL
	next   http.RoundTripper
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == r.host {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.target.Scheme, r.target.Host
	}
	return r.next.RoundTrip(req)
}

// testTelegram: sendMessage to a chat. The Telegram client of
// notifications-engine has api.telegram.org built in, as in Argo CD, and
// uses Go's default transport: the test sends that host to its receiver.
func testTelegram(t *testing.T) {
	h := receiver.NewHTTPAnswers(t, map[string][]byte{
		"POST /botT0K3N/getMe": []byte(`{"ok": true, "result": {"id": 1, "is_bot": true, "first_name": "tollgate", "username": "tollgate_bot"}}`),
	}, []byte(`{"ok": true, "result": {"message_id": 9, "date": 0, "chat": {"id": -100, "type": "channel"}}}`))
	target, _ := url.Parse(h.URL)
	saved := http.DefaultTransport
	http.DefaultTransport = redirect{host: "api.telegram.org", target: target, next: saved}
	t.Cleanup(func() { http.DefaultTransport = saved })
	sendOne(t, map[string]string{"service.telegram": "token: T0K3N\n"}, "telegram", "-100", "")
	got := h.Requests()
	if len(got) != 2 || got[1].Path != "/botT0K3N/sendMessage" {
		t.Fatalf("requests %+v", got)
	}
	form, err := url.ParseQuery(string(got[1].Body))
	if err != nil {
		t.Fatal(err)
	}
	if form.Get("chat_id") != "-100" || form.Get("text") != message {
		t.Errorf("form %v", form)
	}
}

// testPagerDutyV2: PagerDuty's Events API v2 is a constant of the
// go-pagerduty client notifications-engine uses, with its own transport:
// no receiver in the test can stand in for it. The configuration is
// accepted and the template renders the event Argo CD would send.
func testPagerDutyV2(t *testing.T) {
	data := catalog(t, map[string]string{"service.pagerdutyv2": "serviceKeys:\n  shop-service: routing-key\n"})
	data["template.app-sync-succeeded"] += "pagerdutyv2:\n  summary: '{{.app.metadata.name}} synced'\n  severity: info\n  source: '{{.app.metadata.name}}'\n  component: cd\n"
	c, err := Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "r1"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-sync-succeeded.pagerdutyv2": "shop-service"}
	due, _, errs := c.Evaluate(Input{App: a}, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 || c.Service("pagerdutyv2") == nil {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	want := &services.PagerDutyV2Notification{Summary: "shop synced", Severity: "info", Source: "shop", Component: "cd"}
	if diff := cmp.Diff(want, due[0].Notification.PagerDutyV2); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

// TestEveryServiceAccepted: every service type of Argo CD's documentation
// is built from its documented configuration (no sends).
func TestEveryServiceAccepted(t *testing.T) {
	for typ, cfg := range map[string]string{
		"alertmanager": "targets: [alertmanager:9093]\n", "awssqs": "region: us-east-1\nqueue: q\n",
		"email": "host: smtp.example.com\nport: 587\nfrom: a@example.com\n", "gcppubsub": "project: p\ntopic: t\n",
		"googlechat": "webhooks: {a: https://chat.googleapis.com/v1/spaces/x}\n", "grafana": "apiUrl: https://grafana.example.com/api\napiKey: k\n",
		"mattermost": "apiURL: https://mm.example.com\ntoken: t\n", "nats": "url: nats://nats:4222\n",
		"newrelic": "apiURL: https://api.newrelic.com\napiKey: k\n", "opsgenie": "apiUrl: api.opsgenie.com\napiKeys: {a: k}\n",
		"pagerduty": "token: t\nfrom: a@example.com\n", "pagerdutyv2": "serviceKeys: {a: k}\n", "pushover": "token: t\n",
		"rocketchat": "email: a@example.com\npassword: p\n", "slack": "token: xoxb-1\n", "teams": "recipientUrls: {a: https://x.webhook.office.com/y}\n",
		"teams-workflows": "recipientUrls: {a: https://x.api.powerplatform.com/y}\n", "telegram": "token: t\n",
		"webex": "token: t\n", "webhook": "url: https://hooks.example.com\n",
	} {
		c, err := Parse(map[string]string{"service." + typ: cfg}, nil)
		if err != nil || c.Service(typ) == nil {
			t.Errorf("service.%s: %v", typ, err)
		}
	}
}

// TestWebhookURLNotLogged: the logger every go-retryablehttp client (the
// webhook service's) logs to, a "[DEBUG] POST <url>" line per request
// whatever the level, writes nowhere: a webhook's URL is often its secret.
func TestWebhookURLNotLogged(t *testing.T) {
	if c := retryablehttp.NewClient(); c.Logger != retryableHTTPLogger {
		t.Fatalf("a new client logs to %v, not the logger silenced here", c.Logger)
	}
	if w := retryableHTTPLogger.Writer(); w != io.Discard {
		t.Errorf("go-retryablehttp logs to %v", w)
	}
}
