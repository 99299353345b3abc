package notify

import (
	"crypto/sha1" //nolint:gosec // Argo CD's condition key, not a security hash
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"k8s.io/apimachinery/pkg/labels"
)

// AnnotationNotified keeps, on an Application, what was already sent: a
// JSON map from state key to the Unix time it was sent, as Argo CD keeps
// it.
const AnnotationNotified = "notified.notifications.argoproj.io"

// maxStateEntries bounds the notified state; the oldest entries go first.
const maxStateEntries = 100

// State is the notified state of one Application.
type State map[string]int64

// ParseState reads the notified annotation; a value that does not parse is
// an empty state.
func ParseState(v string) State {
	s := State{}
	if v != "" {
		_ = json.Unmarshal([]byte(v), &s)
	}
	return s
}

// String is the annotation's value ("" for an empty state), the oldest
// entries dropped past maxStateEntries.
func (s State) String() string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > maxStateEntries {
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return s[keys[i]] < s[keys[j]] || s[keys[i]] == s[keys[j]] && keys[i] < keys[j] })
		for _, k := range keys[:len(s)-maxStateEntries] {
			delete(s, k)
		}
	}
	b, _ := json.Marshal(map[string]int64(s))
	return string(b)
}

// conditionKey identifies condition i of a trigger by its index and the
// hash of its when expression.
func conditionKey(i int, when string) string {
	sum := sha1.Sum([]byte(when)) //nolint:gosec // see the import
	return fmt.Sprintf("[%d].%s", i, base64.RawURLEncoding.EncodeToString(sum[:]))
}

// stateKey is the key of one notification in the notified state.
func stateKey(oncePer, trigger, cond string, d Destination) string {
	k := fmt.Sprintf("%s:%s:%s:%s", trigger, cond, d.Service, d.Recipient)
	if oncePer != "" {
		k = oncePer + ":" + k
	}
	return k
}

// Destination is where a notification goes: a service name and a
// recipient (a Slack channel, an email address, "" for a webhook).
type Destination struct {
	Service   string `json:"service"`
	Recipient string `json:"recipient"`
}

// Due is one notification to send.
type Due struct {
	Trigger     string
	Destination Destination
	// Key is its notified state key.
	Key          string
	Notification Notification
}

// Subscribe is the prefix of Argo CD's subscription annotations:
// notifications.argoproj.io/subscribe.<trigger>.<service>: r1;r2, or
// subscribe.<service> for the default triggers.
const Subscribe = "notifications.argoproj.io/subscribe."

// Destinations are the destinations of each trigger for an Application
// with the given labels and annotations, and its AppProject's annotations:
// the ConfigMap's subscriptions, then the Application's, then the
// project's, each once.
func (c *Config) Destinations(appLabels, appAnnotations, projectAnnotations map[string]string) map[string][]Destination {
	out := map[string][]Destination{}
	add := func(trigger string, d Destination) {
		for _, e := range out[trigger] {
			if e == d {
				return
			}
		}
		out[trigger] = append(out[trigger], d)
	}
	for _, s := range c.Subscriptions {
		if s.selector != nil && !s.selector.Matches(labels.Set(appLabels)) {
			continue
		}
		for _, r := range s.Recipients {
			svc, recipient, _ := strings.Cut(r, ":")
			recipient, _, _ = strings.Cut(recipient, ":")
			triggers := s.Triggers
			if len(triggers) == 0 {
				triggers = c.defaultTriggers(svc)
			}
			for _, t := range triggers {
				add(t, Destination{Service: svc, Recipient: recipient})
			}
		}
	}
	for _, annotations := range []map[string]string{appAnnotations, projectAnnotations} {
		keys := make([]string, 0, len(annotations))
		for k := range annotations {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rest, ok := strings.CutPrefix(k, Subscribe)
			if !ok {
				continue
			}
			var triggers []string
			svc := rest
			if i := strings.LastIndex(rest, "."); i >= 0 {
				triggers, svc = []string{rest[:i]}, rest[i+1:]
			} else {
				triggers = c.defaultTriggers(svc)
			}
			for _, r := range strings.Split(annotations[k], ";") {
				for _, t := range triggers {
					add(t, Destination{Service: svc, Recipient: strings.TrimSpace(r)})
				}
			}
		}
	}
	return out
}

func (c *Config) defaultTriggers(service string) []string {
	if ts, ok := c.ServiceDefaultTriggers[service]; ok {
		return ts
	}
	return c.DefaultTriggers
}

// Evaluate judges app (the Application as a decoded JSON object; project
// its AppProject's, nil when there is none) against every trigger it is
// subscribed to and returns the notifications due now and the new state:
// a condition that holds and whose key is not in state is due (and its key
// recorded at now); a condition that no longer holds forgets its key
// (without oncePer, so that it fires again the next time). A destination
// whose service is not configured, or a template that does not render, is
// an error for that notification only: errs says which.
func (c *Config) Evaluate(app, project map[string]any, state State, now time.Time) (due []Due, next State, errs []error) {
	next = State{}
	for k, v := range state {
		next[k] = v
	}
	md, _ := app["metadata"].(map[string]any)
	var pmd map[string]any
	if project != nil {
		pmd, _ = project["metadata"].(map[string]any)
	}
	dests := c.Destinations(stringMap(md["labels"]), stringMap(md["annotations"]), stringMap(pmd["annotations"]))
	if len(dests) == 0 {
		return nil, next, nil
	}
	if project == nil {
		project = map[string]any{}
	}
	vars := c.vars(app, project)
	triggers := make([]string, 0, len(dests))
	for t := range dests {
		triggers = append(triggers, t)
	}
	sort.Strings(triggers)
	for _, trigger := range triggers {
		conds, ok := c.Triggers[trigger]
		if !ok {
			errs = append(errs, fmt.Errorf("trigger %q is not defined", trigger))
			continue
		}
		for _, cond := range conds {
			fired, oncePer := cond.evaluate(vars)
			for _, d := range dests[trigger] {
				if !fired {
					delete(next, stateKey("", trigger, cond.key, d))
					continue
				}
				key := stateKey(oncePer, trigger, cond.key, d)
				if _, sent := next[key]; sent {
					continue
				}
				if _, ok := c.Services[d.Service]; !ok {
					errs = append(errs, fmt.Errorf("trigger %s: service %q is not configured", trigger, d.Service))
					continue
				}
				n, err := c.render(cond.Send, vars, d)
				if err != nil {
					errs = append(errs, fmt.Errorf("trigger %s: %w", trigger, err))
					continue
				}
				next[key] = now.Unix()
				due = append(due, Due{Trigger: trigger, Destination: d, Key: key, Notification: n})
			}
		}
	}
	return due, next, errs
}

// evaluate runs the condition: it fires only when when yields true; the
// oncePer value is then formatted as Argo CD formats it.
func (cond Condition) evaluate(vars map[string]any) (bool, string) {
	out, err := expr.Run(cond.when, vars)
	if fired, ok := out.(bool); err != nil || !ok || !fired {
		return false, ""
	}
	if cond.oncePer == nil {
		return true, ""
	}
	v, err := expr.Run(cond.oncePer, vars)
	if err != nil {
		return true, ""
	}
	return true, fmt.Sprintf("%v", v)
}

// stringMap converts decoded JSON labels or annotations.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, e := range m {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out
}
