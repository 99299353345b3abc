package notify

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Service sends a rendered notification to one recipient.
type Service interface {
	Send(ctx context.Context, n Notification, d Destination) error
}

// UnsupportedServiceError refuses a service type tollgate does not
// implement.
type UnsupportedServiceError struct{ Type string }

func (e *UnsupportedServiceError) Error() string {
	return fmt.Sprintf("service type %q is not supported (webhook, slack and email are)", e.Type)
}

// newService decodes the configuration of a service of type typ.
func newService(typ string, cfg []byte) (Service, error) {
	strict := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(cfg))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	switch typ {
	case "webhook":
		var w webhookService
		if err := strict(&w.opts); err != nil {
			return nil, err
		}
		if _, err := url.Parse(w.opts.URL); err != nil || w.opts.URL == "" {
			return nil, fmt.Errorf("url %q: want an http(s) URL", w.opts.URL)
		}
		w.client = httpClient(w.opts.InsecureSkipVerify)
		return &w, nil
	case "slack":
		var s slackService
		if err := strict(&s.opts); err != nil {
			return nil, err
		}
		if s.opts.APIURL == "" {
			s.opts.APIURL = "https://slack.com/api/"
		}
		s.client = httpClient(s.opts.InsecureSkipVerify)
		return &s, nil
	case "email":
		var e emailService
		if err := strict(&e.opts); err != nil {
			return nil, err
		}
		if e.opts.Host == "" || e.opts.Port == 0 || e.opts.From == "" {
			return nil, errors.New("host, port and from are required")
		}
		return &e, nil
	}
	return nil, &UnsupportedServiceError{Type: typ}
}

// httpTimeout bounds one request to a receiver.
const httpTimeout = 30 * time.Second

// maxResponseBytes bounds what is read of a receiver's answer.
const maxResponseBytes = 64 << 10

func httpClient(insecure bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the operator's choice, as in Argo CD
	}
	return &http.Client{Transport: t, Timeout: httpTimeout}
}

// webhookOptions are a webhook service's configuration.
type webhookOptions struct {
	URL     string `json:"url"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers,omitempty"`
	BasicAuth *struct {
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"basicAuth,omitempty"`
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// The retry options of Argo CD's webhook service; tollgate's
	// Dispatcher retries every service, so they are read and not used.
	RetryWaitMin        duration `json:"retryWaitMin,omitempty"`
	RetryWaitMax        duration `json:"retryWaitMax,omitempty"`
	RetryMax            int      `json:"retryMax,omitempty"`
	MaxIdleConns        int      `json:"maxIdleConns,omitempty"`
	MaxIdleConnsPerHost int      `json:"maxIdleConnsPerHost,omitempty"`
	MaxConnsPerHost     int      `json:"maxConnsPerHost,omitempty"`
	IdleConnTimeout     duration `json:"idleConnTimeout,omitempty"`
}

type webhookService struct {
	opts   webhookOptions
	client *http.Client
}

// Send sends the template's request for this service (by its name): its
// method (GET by default, as Argo CD's), path appended to the URL, and
// body (the message when the template has no webhook part for it).
func (w *webhookService) Send(ctx context.Context, n Notification, d Destination) error {
	method, body, u := http.MethodGet, n.Message, w.opts.URL
	if t, ok := n.Webhook[d.Service]; ok {
		body = t.Body
		if t.Method != "" {
			method = t.Method
		}
		if t.Path != "" {
			u = strings.TrimRight(u, "/") + "/" + strings.TrimLeft(t.Path, "/")
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range w.opts.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if a := w.opts.BasicAuth; a != nil {
		req.SetBasicAuth(a.Username, a.Password)
	}
	return do(w.client, req, nil)
}

// do sends req and fails on a status other than 2xx; answer, when set,
// receives the body of a 2xx answer.
func do(c *http.Client, req *http.Request, answer *[]byte) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("request to %s has failed with error code %d: %s", redact(req.URL), resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if answer != nil {
		*answer = b
	}
	return nil
}

// redact drops a URL's credentials and query (Slack and other incoming
// webhook URLs carry their token in the path, so only the host is kept).
func redact(u *url.URL) string {
	return u.Scheme + "://" + u.Host
}

// slackOptions are a slack service's configuration.
type slackOptions struct {
	Token              string   `json:"token"`
	APIURL             string   `json:"apiURL,omitempty"`
	Username           string   `json:"username,omitempty"`
	Icon               string   `json:"icon,omitempty"`
	Channels           []string `json:"channels,omitempty"`
	SigningSecret      string   `json:"signingSecret,omitempty"`
	InsecureSkipVerify bool     `json:"insecureSkipVerify,omitempty"`
	DisableUnfurl      bool     `json:"disableUnfurl,omitempty"`
	MaxIdleConns       int      `json:"maxIdleConns,omitempty"`
	MaxConnsPerHost    int      `json:"maxConnsPerHost,omitempty"`
	IdleConnTimeout    duration `json:"idleConnTimeout,omitempty"`
}

type slackService struct {
	opts   slackOptions
	client *http.Client
}

// emojiIcon is a Slack emoji name such as :rocket:.
var emojiIcon = regexp.MustCompile(`^:.+:$`)

// Send posts the message to the recipient channel with Slack's
// chat.postMessage, form-encoded with the token as Slack's Go client
// sends it; a Slack answer of ok: false is an error.
func (s *slackService) Send(ctx context.Context, n Notification, d Destination) error {
	f := url.Values{"token": {s.opts.Token}, "channel": {d.Recipient}, "text": {n.Message}}
	username, icon := s.opts.Username, s.opts.Icon
	if t := n.Slack; t != nil {
		if t.Username != "" {
			username = t.Username
		}
		if t.Icon != "" {
			icon = t.Icon
		}
		f.Set("attachments", cmp.Or(strings.TrimSpace(t.Attachments), "[]"))
		if b := strings.TrimSpace(t.Blocks); b != "" {
			f.Set("blocks", b)
		}
		if t.NotifyBroadcast {
			f.Set("reply_broadcast", "true")
		}
	}
	if username != "" {
		f.Set("username", username)
	}
	switch {
	case emojiIcon.MatchString(icon):
		f.Set("icon_emoji", icon)
	case strings.HasPrefix(icon, "http://") || strings.HasPrefix(icon, "https://"):
		f.Set("icon_url", icon)
	}
	if s.opts.DisableUnfurl {
		f.Set("unfurl_links", "false")
		f.Set("unfurl_media", "false")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.APIURL+"chat.postMessage", strings.NewReader(f.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var answer []byte
	if err := do(s.client, req, &answer); err != nil {
		return err
	}
	var r struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(answer, &r); err != nil {
		return fmt.Errorf("slack answered: %w", err)
	}
	if !r.OK {
		return fmt.Errorf("slack refused the message: %s", r.Error)
	}
	return nil
}
