package notify

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/subscriptions"
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
type Destination = services.Destination

// Due is one notification to send.
type Due struct {
	Trigger     string
	Destination Destination
	// Key is its notified state key.
	Key          string
	Notification services.Notification
}

// Subscribe is the prefix of Argo CD's subscription annotations:
// notifications.argoproj.io/subscribe.<trigger>.<service>: r1;r2, or
// subscribe.<service> for the default triggers.
const Subscribe = "notifications.argoproj.io/subscribe."

// Destinations are the destinations of each trigger for an Application
// with the given labels and annotations, and its AppProject's annotations,
// as Argo CD's notifications controller gathers them: the ConfigMap's
// subscriptions, then the Application's annotations (subscribe.* and
// subscriptions), then the project's, each once.
func (c *Config) Destinations(appLabels, appAnnotations, projectAnnotations map[string]string) map[string][]Destination {
	d := c.api.GetGlobalDestinations(appLabels)
	d.Merge(subscriptions.NewAnnotations(appAnnotations).GetDestinations(c.api.DefaultTriggers, c.api.ServiceDefaultTriggers))
	if projectAnnotations != nil {
		d.Merge(subscriptions.NewAnnotations(projectAnnotations).GetDestinations(c.api.DefaultTriggers, c.api.ServiceDefaultTriggers))
	}
	return d.Dedup()
}

// Input is what Evaluate judges.
type Input struct {
	// App is the Application as a decoded JSON object.
	App map[string]any
	// Project is its AppProject's, nil when there is none.
	Project map[string]any
	// Repo reads the commits of repo.GetCommitMetadata; nil fails it.
	Repo Repo
}

// Evaluate judges in.App against every trigger it is subscribed to and
// returns the notifications due now, rendered, and the new state: a
// condition that holds and whose key is not in state is due (and its key
// recorded at now); a condition that no longer holds forgets its key
// (without oncePer, so that it fires again the next time), as Argo CD's
// controller does. A trigger that is not configured, a destination whose
// service is not configured, or a template that does not render, is an
// error for that notification only: errs says which, and its key is not
// recorded, so it is tried again the next time.
func (c *Config) Evaluate(in Input, state State, now time.Time) (due []Due, next State, errs []error) {
	next = State{}
	for k, v := range state {
		next[k] = v
	}
	md, _ := in.App["metadata"].(map[string]any)
	var projectAnnotations map[string]string
	if in.Project != nil {
		pmd, _ := in.Project["metadata"].(map[string]any)
		projectAnnotations = stringMap(pmd["annotations"])
	}
	dests := c.Destinations(stringMap(md["labels"]), stringMap(md["annotations"]), projectAnnotations)
	if len(dests) == 0 {
		return nil, next, nil
	}
	triggers := make([]string, 0, len(dests))
	for t := range dests {
		triggers = append(triggers, t)
	}
	sort.Strings(triggers)
	for _, trigger := range triggers {
		results, err := c.triggers.Run(trigger, c.vars(in.App, in.Project, in.Repo, ""))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, cr := range results {
			for _, d := range dests[trigger] {
				key := stateKey(cr.OncePer, trigger, cr.Key, d)
				if !cr.Triggered {
					delete(next, key)
					continue
				}
				if _, sent := next[key]; sent {
					continue
				}
				if _, ok := c.services[d.Service]; !ok {
					errs = append(errs, fmt.Errorf("trigger %s: notification service '%s' is not supported", trigger, d.Service))
					continue
				}
				n, err := c.render(cr.Templates, in, d)
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

// render renders the templates for one destination as Argo CD's api.Send
// does: the variables for the destination's service, with serviceType and
// recipient.
func (c *Config) render(names []string, in Input, d Destination) (services.Notification, error) {
	vars := c.vars(in.App, in.Project, in.Repo, d.Service)
	vars["serviceType"], vars["recipient"] = d.Service, d.Recipient
	n, err := c.templates.FormatNotification(vars, names...)
	if err != nil {
		return services.Notification{}, err
	}
	return *n, nil
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
