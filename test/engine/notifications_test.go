package engine_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/notify"
	"github.com/tollgate-dev/tollgate/test/envtest"
	"github.com/tollgate-dev/tollgate/test/receiver"
)

// pod is a Pod manifest, which no kubelet of the test control plane runs:
// it stays Pending (Progressing) until the test sets its phase (setPhase).
func pod(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: app
    image: nginx:1.27
`, name)
}

// TestNotifications: with config/notifications' catalog, a webhook service
// (an HTTP receiver in the test), an email service (an SMTP receiver) and
// a GitHub service (a fake GitHub API, a GitHub App's key from the Secret),
// an Application subscribed by its annotations gets exactly one message per
// event: a succeeded sync (webhook, email and a GitHub commit status), a
// degraded Application, and a revision the policy gate refuses
// (on-policy-violation, and the failed automated sync). The webhook receiver is down when the refusal happens:
// the notification is retried while the Application goes on being
// reconciled, and arrives once it is back.
func TestNotifications(t *testing.T) {
	hook := receiver.NewHTTP(t, nil)
	mail := receiver.NewSMTP(t)
	github := receiver.NewHTTPAnswers(t, map[string][]byte{
		"POST /api/v3/app/installations/7/access_tokens": []byte(`{"token": "ghs_installation", "expires_at": "2099-01-01T00:00:00Z"}`),
	}, []byte(`{}`))
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	githubKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	f := newFixture(t, map[string]string{"manifests/cm.yaml": configMap("settings", "1"), "manifests/pod.yaml": pod("web")})

	b, err := os.ReadFile(filepath.Join(envtest.RepoRoot(), "config", "notifications", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(b, cm); err != nil {
		t.Fatal(err)
	}
	cm.Namespace = argoNS
	cm.Data["service.webhook.hook"] = "url: " + hook.URL + "\nheaders:\n- {name: Authorization, value: $hook-token}\n"
	cm.Data["service.email"] = "host: " + mail.Host + "\nport: " + strconv.Itoa(mail.Port) + "\nfrom: tollgate@example.com\n"
	cm.Data["service.github"] = "appID: 1\ninstallationID: 7\nenterpriseBaseURL: " + github.URL + "/api/v3\nprivateKey: $github-privateKey\n"
	cm.Data["template.app-sync-succeeded"] += "webhook:\n  hook: {method: POST, body: 'synced {{.app.metadata.name}} {{.app.status.operationState.syncResult.revision}} {{(call .repo.GetCommitMetadata .app.status.operationState.syncResult.revision).Message}} {{(call .repo.GetAppDetails).Type}}'}\n" +
		"github:\n  repoURLPath: https://github.com/tollgate-test/{{.app.metadata.name}}\n  revisionPath: '{{.app.status.operationState.syncResult.revision}}'\n" +
		"  status: {state: success, label: 'continuous-delivery/{{.app.metadata.name}}'}\n"
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notify.SecretName, Namespace: argoNS},
		StringData: map[string]string{"hook-token": "Bearer s3cret", "github-privateKey": string(githubKey)}})
	f.create(cm)

	sub := func(trigger, service string) string { return notify.Subscribe + trigger + "." + service }
	f.application(&v1alpha1.SyncPolicyAutomated{}, func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{
			sub("on-sync-succeeded", "hook"): "", sub("on-sync-succeeded", "email"): "ops@example.com", sub("on-sync-succeeded", "github"): "",
			sub("on-sync-failed", "hook"): "", sub("on-health-degraded", "hook"): "", sub("on-policy-violation", "hook"): "",
		}
	})
	// messages counts the webhook's messages containing each of want.
	messages := func(want string) (int, string) {
		n := 0
		var all []string
		for _, r := range hook.Requests() {
			all = append(all, string(r.Body))
			if strings.Contains(string(r.Body), want) {
				n++
			}
		}
		return n, strings.Join(all, " | ")
	}
	exactlyOne := func(desc, want string) {
		t.Helper()
		eventually(t, desc, func() (bool, string) {
			n, all := messages(want)
			return n == 1, all
		})
		consistently(t, desc+" only once", 3*resync, func() (bool, string) {
			n, all := messages(want)
			return n == 1, all
		})
	}

	setPhase := func(phase corev1.PodPhase) {
		t.Helper()
		eventually(t, "pod web "+string(phase), func() (bool, string) {
			var p corev1.Pod
			if err := f.get(&p, "web"); err != nil {
				return false, err.Error()
			}
			p.Status.Phase = phase
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			err := env.Client.Status().Update(t.Context(), &p)
			return err == nil, fmt.Sprint(err)
		})
	}
	setPhase(corev1.PodRunning)
	// repo.GetCommitMetadata reads the commit, and repo.GetAppDetails the
	// source's details, through the repo-server.
	exactlyOne("one webhook message for the succeeded sync", "synced "+f.name+" "+f.head+" add manifests Directory")
	if r := hook.Requests()[0]; r.Method != "POST" || r.Header.Get("Authorization") != "Bearer s3cret" {
		t.Errorf("webhook request %s with Authorization %q", r.Method, r.Header.Get("Authorization"))
	}
	eventually(t, "one email for the succeeded sync", func() (bool, string) {
		msgs := mail.Messages()
		return len(msgs) == 1 && strings.Contains(string(msgs[0].Data), "Subject: Application "+f.name+" was synced."), fmt.Sprint(len(msgs))
	})

	// One commit status on the synced revision, with the installation token.
	statuses := func() (int, string) {
		var got []string
		for _, r := range github.Requests() {
			if r.Path == "/api/v3/repos/tollgate-test/"+f.name+"/statuses/"+f.head {
				var st map[string]any
				_ = json.Unmarshal(r.Body, &st)
				got = append(got, fmt.Sprint(st["state"], " ", st["context"], " ", r.Header.Get("Authorization")))
			}
		}
		return len(got), strings.Join(got, " | ")
	}
	eventually(t, "one GitHub commit status for the succeeded sync", func() (bool, string) {
		n, all := statuses()
		return n == 1 && all == "success continuous-delivery/"+f.name+" token ghs_installation", all
	})

	// The Pod fails: the Application is Degraded.
	setPhase(corev1.PodFailed)
	exactlyOne("one message for the degraded Application", "Application "+f.name+" is degraded")

	// The receiver goes down, and a revision with a latest-tagged image is
	// refused by the gate.
	hook.SetFailing(true)
	rev := f.git.Commit(t, f.repo, map[string]string{"manifests/web.yaml": deployment("web", "nginx:latest", 1)}, "latest tag")
	f.refresh()
	f.waitApp("refused by the gate", func(a *v1alpha1.Application) bool {
		msg, ok := condition(a, v1alpha1.ApplicationConditionPolicyViolation)
		return ok && strings.HasPrefix(msg, "revision "+rev+" refused:\n[no-latest-tag]")
	})
	// Reconciles go on while the receiver is down.
	before := f.app().Status.ReconciledAt
	f.waitApp("compared again while the receiver is down", func(a *v1alpha1.Application) bool {
		return a.Status.ReconciledAt != nil && before != nil && a.Status.ReconciledAt.After(before.Time)
	})
	eventually(t, "the notification tried while the receiver is down", func() (bool, string) {
		return hook.Refused() >= 2, fmt.Sprint(hook.Refused(), " refused")
	})
	hook.SetFailing(false)
	exactlyOne("one message for the policy violation", "tollgate refused a revision of application "+f.name+"; nothing of it was applied.\nrevision "+rev+" refused:")
	// It names the revision, the rule and the object.
	if n, all := messages("revision " + rev + " refused:\n[no-latest-tag] Deployment/" + f.ns + "/web: "); n != 1 {
		t.Errorf("no policy violation message names the rule and the object: %s", all)
	}
	exactlyOne("one message for the refused automated sync", "The sync of application "+f.name+" failed")

	var app v1alpha1.Application
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: argoNS, Name: f.name}, &app); err != nil {
		t.Fatal(err)
	}
	if n, all := statuses(); n != 1 {
		t.Errorf("GitHub commit statuses: %s, want one", all)
	}
	if state := notify.ParseState(app.Annotations[notify.AnnotationNotified]); len(state) < 6 {
		t.Errorf("notified state %v, want an entry per message sent", state)
	}
}
