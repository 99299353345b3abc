package notify

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
)

// Notification is a rendered notification, ready for any service.
type Notification struct {
	Message string                     `json:"message,omitempty"`
	Email   *EmailTemplate             `json:"email,omitempty"`
	Slack   *SlackTemplate             `json:"slack,omitempty"`
	Webhook map[string]WebhookTemplate `json:"webhook,omitempty"`
}

// funcs are the template functions: Sprig's, without the environment.
var funcs = func() template.FuncMap {
	m := sprig.TxtFuncMap()
	delete(m, "env")
	delete(m, "expandenv")
	return m
}()

// vars are what conditions and templates see, as in Argo CD: app,
// appProject, context, and the time, strings and repo helpers.
func (c *Config) vars(app, project map[string]any) map[string]any {
	return map[string]any{
		"app": app, "appProject": project, "context": c.Context,
		"time": map[string]any{
			"Now":     time.Now,
			"Parse":   func(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) },
			"RFC3339": time.RFC3339, "Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
			"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
		},
		"strings": map[string]any{"ReplaceAll": strings.ReplaceAll, "ToUpper": strings.ToUpper, "ToLower": strings.ToLower},
		"repo": map[string]any{
			"RepoURLToHTTPS":    repoURLToHTTPS,
			"FullNameByRepoURL": fullNameByRepoURL,
			"QueryEscape":       url.QueryEscape,
		},
	}
}

// sshURL is git@host:path or ssh://[user@]host[:port]/path.
var sshURL = regexp.MustCompile(`^(?:ssh://)?(?:[\w.-]+@)?([\w.-]+)(?::\d+)?[:/](.+)$`)

// repoURLToHTTPS turns an SSH repository URL into its https:// form, as
// Argo CD's repo.RepoURLToHTTPS; other URLs are returned as they are.
func repoURLToHTTPS(u string) string {
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return u
	}
	if m := sshURL.FindStringSubmatch(u); m != nil {
		return "https://" + m[1] + "/" + strings.TrimPrefix(m[2], "/")
	}
	return u
}

// fullNameByRepoURL is owner/name of a repository URL, without ".git".
func fullNameByRepoURL(u string) string {
	u = strings.TrimSuffix(repoURLToHTTPS(u), ".git")
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.Trim(p.Path, "/")
}

// render renders the templates of a condition's send list for one
// destination, in order onto one notification: the message and the email
// fields are replaced only by non-empty values, the slack and webhook
// fields always, as in Argo CD.
func (c *Config) render(names []string, vars map[string]any, d Destination) (Notification, error) {
	v := make(map[string]any, len(vars)+2)
	for k, e := range vars {
		v[k] = e
	}
	v["serviceType"], v["recipient"] = d.Service, d.Recipient
	var n Notification
	for _, name := range names {
		t, ok := c.Templates[name]
		if !ok {
			return n, fmt.Errorf("template %q is not defined", name)
		}
		r := renderer{vars: v, name: name}
		if s := r.do("message", t.Message); s != "" {
			n.Message = s
		}
		if t.Email != nil {
			if n.Email == nil {
				n.Email = &EmailTemplate{}
			}
			if s := r.do("email.subject", t.Email.Subject); s != "" {
				n.Email.Subject = s
			}
			if s := r.do("email.body", t.Email.Body); s != "" {
				n.Email.Body = s
			}
		}
		if t.Slack != nil {
			s := *t.Slack
			s.Username, s.Icon = r.do("slack.username", s.Username), r.do("slack.icon", s.Icon)
			s.Attachments, s.Blocks = r.do("slack.attachments", s.Attachments), r.do("slack.blocks", s.Blocks)
			s.GroupingKey = r.do("slack.groupingKey", s.GroupingKey)
			n.Slack = &s
		}
		for svc, w := range t.Webhook {
			if n.Webhook == nil {
				n.Webhook = map[string]WebhookTemplate{}
			}
			n.Webhook[svc] = WebhookTemplate{Method: w.Method, Path: r.do("webhook."+svc+".path", w.Path), Body: r.do("webhook."+svc+".body", w.Body)}
		}
		if r.err != nil {
			return n, r.err
		}
	}
	return n, nil
}

// renderer renders the fields of one template, keeping the first error.
type renderer struct {
	vars map[string]any
	name string
	err  error
}

func (r *renderer) do(field, text string) string {
	if r.err != nil || text == "" {
		return ""
	}
	t, err := template.New(r.name).Funcs(funcs).Parse(text)
	if err == nil {
		var b bytes.Buffer
		if err = t.Execute(&b, r.vars); err == nil {
			return b.String()
		}
	}
	r.err = fmt.Errorf("template %s %s: %w", r.name, field, err)
	return ""
}
