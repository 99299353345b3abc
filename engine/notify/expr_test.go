package notify

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tollgate-dev/tollgate/test/receiver"
)

func TestRepoURLFunctions(t *testing.T) {
	tests := []struct{ in, https, fullName string }{
		{"git@github.com:shop-org/shop.git", "https://github.com/shop-org/shop.git", "shop-org/shop"},
		{"https://github.com/shop-org/shop", "https://github.com/shop-org/shop", "shop-org/shop"},
		{"ssh://git@gitlab.example.com:2222/group/sub/app.git", "https://gitlab.example.com:2222/group/sub/app.git", "group/sub"},
		{"https://user:pw@bitbucket.org/team/app.git", "https://bitbucket.org/team/app.git", "team/app"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			https, err := RepoURLToHTTPS(tc.in)
			if err != nil || https != tc.https {
				t.Errorf("RepoURLToHTTPS = %q, %v; want %q", https, err, tc.https)
			}
			name, err := FullNameByRepoURL(tc.in)
			if err != nil || name != tc.fullName {
				t.Errorf("FullNameByRepoURL = %q, %v; want %q", name, err, tc.fullName)
			}
		})
	}
}

// fakeRepo answers one commit.
type fakeRepo struct{ calls int }

func (f *fakeRepo) CommitMetadata(sha string) (CommitMetadata, error) {
	f.calls++
	if sha != "r1" {
		return CommitMetadata{}, errors.New("no such commit")
	}
	return CommitMetadata{Message: "fix the cart", Author: "Ann <ann@example.com>", Date: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Tags: []string{"v1.2.0"}}, nil
}

// AppDetails answers a Helm chart's details, the Application's own
// parameter beside the chart's.
func (f *fakeRepo) AppDetails() (AppDetail, error) {
	f.calls++
	return AppDetail{Type: "Helm", Helm: &CustomHelmAppSpec{
		HelmAppSpec: HelmAppSpec{
			Parameters:     []*HelmParameter{{Name: "image.tag", Value: "1.0.0"}, {Name: "replicas", Value: "2"}},
			FileParameters: []*HelmFileParameter{{Name: "config", Path: "files/config.json"}},
		},
		HelmParameterOverrides: []HelmParameter{{Name: "image.tag", Value: "1.2.0"}},
	}}, nil
}

// TestTemplateFunctions: Argo CD's repo, sync, time and strings functions
// in a trigger's condition and in a template, with .secrets and
// .context.notificationType (the service's name, as in Argo CD).
func TestTemplateFunctions(t *testing.T) {
	c, err := Parse(catalog(t, map[string]string{
		"service.webhook.hook": "url: https://hooks.example.com\n",
		"trigger.on-tagged": "- when: app.status.operationState != nil and repo.GetCommitMetadata(app.status.operationState.syncResult.revision).Tags[0] == 'v1.2.0'" +
			" and repo.GetAppDetails().Helm.GetParameterValueByName('image.tag') == 'v1.2.0'[1:]\n" +
			"  send: [tagged]\n",
		"template.tagged": `message: |
  {{(call .repo.GetCommitMetadata .app.status.operationState.syncResult.revision).Message}} by {{(call .repo.GetCommitMetadata .app.status.operationState.syncResult.revision).Author}}
  {{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}} {{call .repo.FullNameByRepoURL .app.spec.source.repoURL}}
  {{(call .repo.GetAppDetails).Type}} {{(call .repo.GetAppDetails).Helm.GetParameterValueByName "image.tag"}} {{(call .repo.GetAppDetails).Helm.GetParameterValueByName "replicas"}} {{(call .repo.GetAppDetails).Helm.GetFileParameterPathByName "config"}} [{{(call .repo.GetAppDetails).Helm.GetParameterValueByName "missing"}}] {{(call .repo.GetAppDetails).Kustomize}}
  {{call .sync.GetInfoItem .app "reason"}} {{call .strings.ToUpper .context.notificationType}} {{index .secrets "token" | toString}} {{(call .time.Parse .app.status.operationState.finishedAt).Year}}
`,
	}), map[string][]byte{"token": []byte("t0k")})
	if err != nil {
		t.Fatal(err)
	}
	a := app(t, strings.ReplaceAll(succeeded, "REV", "r1"))
	a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-tagged.hook": ""}
	a["spec"].(map[string]any)["source"] = map[string]any{"repoURL": "git@github.com:shop-org/shop.git"}
	a["status"].(map[string]any)["operationState"].(map[string]any)["operation"] = map[string]any{
		"info": []any{map[string]any{"name": "reason", "value": "hotfix"}},
	}
	repo := &fakeRepo{}
	due, _, errs := c.Evaluate(Input{App: a, Repo: repo}, State{}, time.Now())
	if len(errs) > 0 || len(due) != 1 {
		t.Fatalf("due %+v, errors %v", due, errs)
	}
	want := "fix the cart by Ann <ann@example.com>\nhttps://github.com/shop-org/shop.git shop-org/shop\nHelm 1.2.0 2 files/config.json [] <nil>\nhotfix HOOK t0k 2026\n"
	if diff := cmp.Diff(want, due[0].Notification.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	// Without a repository reader, the condition fails and nothing is due.
	if due, _, _ := c.Evaluate(Input{App: a}, State{}, time.Now()); len(due) != 0 {
		t.Errorf("without a Repo: due %+v", due)
	}
}

// TestSlackThreads: Slack's deliveryPolicy and groupingKey, as
// notifications-engine's Slack service keeps them: the first message of a
// grouping key is posted; the next one of the group goes to its thread
// and, with PostAndUpdate, updates the first message.
func TestSlackThreads(t *testing.T) {
	h := receiver.NewHTTPAnswers(t, map[string][]byte{
		"POST /api/chat.postMessage": []byte(`{"ok": true, "channel": "C1", "ts": "1700000000.000100"}`),
		"POST /api/chat.update":      []byte(`{"ok": true, "channel": "C1", "ts": "1700000000.000100"}`),
	}, []byte(`{"ok": true}`))
	data := catalog(t, map[string]string{"service.slack": "token: xoxb-1\napiURL: " + h.URL + "/api/\n"})
	data["template.app-sync-succeeded"] = "message: synced {{.app.status.sync.revision}}\nslack:\n  groupingKey: '{{.app.metadata.name}}'\n  deliveryPolicy: PostAndUpdate\n"
	c, err := Parse(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(rev string) {
		t.Helper()
		a := app(t, strings.ReplaceAll(succeeded, "REV", rev))
		a["metadata"].(map[string]any)["annotations"] = map[string]any{Subscribe + "on-sync-succeeded.slack": "deploys"}
		due, _, errs := c.Evaluate(Input{App: a}, State{}, time.Now())
		if len(errs) > 0 || len(due) != 1 {
			t.Fatalf("due %+v, errors %v", due, errs)
		}
		if err := c.Service("slack").Send(due[0].Notification, due[0].Destination); err != nil {
			t.Fatal(err)
		}
	}
	send("r1")
	send("r2")
	var got []string
	for _, r := range h.Requests() {
		f, _ := url.ParseQuery(string(r.Body))
		got = append(got, r.Path+" channel="+f.Get("channel")+" ts="+f.Get("ts")+" thread_ts="+f.Get("thread_ts")+" text="+f.Get("text"))
	}
	want := []string{
		"/api/chat.postMessage channel=deploys ts= thread_ts= text=synced r1",
		"/api/chat.postMessage channel=deploys ts= thread_ts=1700000000.000100 text=synced r2",
		"/api/chat.update channel=C1 ts=1700000000.000100 thread_ts=1700000000.000100 text=synced r2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Slack calls (-want +got):\n%s", diff)
	}
}
