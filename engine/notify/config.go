package notify

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The names of Argo CD's notifications ConfigMap and Secret, in the
// control-plane namespace.
const (
	ConfigMapName = "argocd-notifications-cm"
	SecretName    = "argocd-notifications-secret"
)

// Config is argocd-notifications-cm, parsed and compiled, with the
// Secret's values in the services' configuration.
type Config struct {
	Triggers  map[string][]Condition
	Templates map[string]Template
	// Services are the configured services by name: service.<type> is
	// named <type>, service.<type>.<name> <name>.
	Services      map[string]Service
	Subscriptions []GlobalSubscription
	// DefaultTriggers are those of a subscription that names none;
	// ServiceDefaultTriggers override them per service name.
	DefaultTriggers        []string
	ServiceDefaultTriggers map[string][]string
	// Context is the context key of the ConfigMap (argocdUrl and others),
	// .context in templates and context in conditions.
	Context map[string]string
}

// Condition is one condition of a trigger.
type Condition struct {
	When        string   `json:"when"`
	Send        []string `json:"send"`
	OncePer     string   `json:"oncePer,omitempty"`
	Description string   `json:"description,omitempty"`

	when, oncePer *vm.Program
	// key identifies the condition in the notified state: its index and
	// a hash of its when expression, as Argo CD's.
	key string
}

// Template is one template.<name> of the ConfigMap: Go templates over the
// Application.
type Template struct {
	Message string                     `json:"message,omitempty"`
	Email   *EmailTemplate             `json:"email,omitempty"`
	Slack   *SlackTemplate             `json:"slack,omitempty"`
	Webhook map[string]WebhookTemplate `json:"webhook,omitempty"`
}

// EmailTemplate is a template's email part.
type EmailTemplate struct {
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

// SlackTemplate is a template's slack part; Attachments and Blocks render
// to JSON arrays.
type SlackTemplate struct {
	Username        string `json:"username,omitempty"`
	Icon            string `json:"icon,omitempty"`
	Attachments     string `json:"attachments,omitempty"`
	Blocks          string `json:"blocks,omitempty"`
	GroupingKey     string `json:"groupingKey,omitempty"`
	NotifyBroadcast bool   `json:"notifyBroadcast,omitempty"`
	DeliveryPolicy  string `json:"deliveryPolicy,omitempty"`
}

// WebhookTemplate is a template's request to one webhook service.
type WebhookTemplate struct {
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Body   string `json:"body,omitempty"`
}

// GlobalSubscription is one entry of the ConfigMap's subscriptions.
type GlobalSubscription struct {
	// Recipients are "service:recipient" or "service".
	Recipients []string `json:"recipients"`
	// Triggers are trigger names; none means the default triggers.
	Triggers []string `json:"triggers,omitempty"`
	// Selector is a label selector over the Application's labels.
	Selector string `json:"selector,omitempty"`

	selector labels.Selector
}

// secretRef is a $reference to a key of the Secret in a service's
// configuration.
var secretRef = regexp.MustCompile(`\$[\w-]+`)

// Parse reads argocd-notifications-cm's data, with secret the data of
// argocd-notifications-secret. Errors name the key.
func Parse(data map[string]string, secret map[string][]byte) (*Config, error) {
	c := &Config{
		Triggers: map[string][]Condition{}, Templates: map[string]Template{}, Services: map[string]Service{},
		ServiceDefaultTriggers: map[string][]string{}, Context: map[string]string{},
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := data[k]
		var err error
		switch {
		case strings.HasPrefix(k, "trigger."):
			err = c.parseTrigger(strings.TrimPrefix(k, "trigger."), v)
		case strings.HasPrefix(k, "template."):
			var t Template
			if err = yaml.Unmarshal([]byte(v), &t); err == nil {
				c.Templates[strings.TrimPrefix(k, "template.")] = t
			}
		case strings.HasPrefix(k, "service."):
			err = c.parseService(k, v, secret)
		case k == "subscriptions":
			err = c.parseSubscriptions(v)
		case k == "defaultTriggers":
			err = yaml.Unmarshal([]byte(v), &c.DefaultTriggers)
		case strings.HasPrefix(k, "defaultTriggers."):
			var ts []string
			if err = yaml.Unmarshal([]byte(v), &ts); err == nil {
				c.ServiceDefaultTriggers[strings.TrimPrefix(k, "defaultTriggers.")] = ts
			}
		case k == "context":
			err = yaml.Unmarshal([]byte(v), &c.Context)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", ConfigMapName, k, err)
		}
	}
	for name, conds := range c.Triggers {
		for i, cond := range conds {
			for _, t := range cond.Send {
				if _, ok := c.Templates[t]; !ok {
					return nil, fmt.Errorf("%s trigger.%s[%d].send: template %q is not defined", ConfigMapName, name, i, t)
				}
			}
		}
	}
	return c, nil
}

// parseTrigger compiles the conditions of trigger name.
func (c *Config) parseTrigger(name, v string) error {
	var conds []Condition
	if err := yaml.Unmarshal([]byte(v), &conds); err != nil {
		return err
	}
	for i := range conds {
		cond := &conds[i]
		when := cond.When
		if strings.TrimSpace(when) == "" {
			when = "false"
		}
		var err error
		if cond.when, err = expr.Compile(when); err != nil {
			return fmt.Errorf("[%d].when: %w", i, err)
		}
		if cond.OncePer != "" {
			if cond.oncePer, err = expr.Compile(cond.OncePer); err != nil {
				return fmt.Errorf("[%d].oncePer: %w", i, err)
			}
		}
		cond.key = conditionKey(i, cond.When)
	}
	c.Triggers[name] = conds
	return nil
}

// parseService reads service.<type> or service.<type>.<name>, with the
// $references of its string values taken from secret.
func (c *Config) parseService(key, v string, secret map[string][]byte) error {
	parts := strings.Split(key, ".")
	if len(parts) > 3 {
		return fmt.Errorf("want service.<type> or service.<type>.<name>")
	}
	typ, name := parts[1], parts[1]
	if len(parts) == 3 {
		name = parts[2]
	}
	var raw any
	if err := yaml.Unmarshal([]byte(v), &raw); err != nil {
		return err
	}
	b, err := json.Marshal(resolveSecrets(raw, secret))
	if err != nil {
		return err
	}
	s, err := newService(typ, b)
	if err != nil {
		return err
	}
	c.Services[name] = s
	return nil
}

// resolveSecrets replaces every $key in the strings of v with the
// Secret's value of key; an unknown key stays as it is.
func resolveSecrets(v any, secret map[string][]byte) any {
	switch v := v.(type) {
	case string:
		return secretRef.ReplaceAllStringFunc(v, func(ref string) string {
			if val, ok := secret[ref[1:]]; ok {
				return string(val)
			}
			return ref
		})
	case map[string]any:
		for k, e := range v {
			v[k] = resolveSecrets(e, secret)
		}
	case []any:
		for i, e := range v {
			v[i] = resolveSecrets(e, secret)
		}
	}
	return v
}

// parseSubscriptions reads the subscriptions key.
func (c *Config) parseSubscriptions(v string) error {
	if err := yaml.Unmarshal([]byte(v), &c.Subscriptions); err != nil {
		return err
	}
	for i := range c.Subscriptions {
		sel, err := labels.Parse(c.Subscriptions[i].Selector)
		if err != nil {
			return fmt.Errorf("[%d].selector: %w", i, err)
		}
		c.Subscriptions[i].selector = sel
	}
	return nil
}

// duration is a time.Duration in a service's configuration: integer
// nanoseconds, as Argo CD reads it, or a Go duration string ("1s"), which
// Argo CD's documentation shows but its decoder refuses.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		*d = duration(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration: %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}
