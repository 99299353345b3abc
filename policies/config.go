package policies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/bounded"
)

// ExemptAnnotation is the default annotation that exempts one object from
// rules: a comma-separated list of rule ids (spaces allowed), or "*" for all
// rules, e.g. `tollgate.dev/exempt: "no-latest-tag, hpa-replicas-conflict"`.
const ExemptAnnotation = "tollgate.dev/exempt"

// DefaultArgoCDNamespace is the namespace Argo CD runs in unless configured.
const DefaultArgoCDNamespace = "argocd"

// DefaultTollgateNamespace is the namespace tollgate runs in unless
// configured.
const DefaultTollgateNamespace = "tollgate-system"

// maxConfigBytes bounds the size of a configuration file.
const maxConfigBytes = 1 << 20

// Config is the policy configuration shared by every enforcement point. The
// webhook and the engine embed it in their own configuration types.
type Config struct {
	// ArgoCDNamespace is the namespace Argo CD runs in; empty means "argocd".
	// It fills Input.Context.ArgoCDNamespace when the caller left it empty.
	ArgoCDNamespace string `json:"argocdNamespace,omitempty"`
	// Rules overrides the severity of built-in and user rules by id. A rule
	// set to off produces no violations.
	Rules RuleSeverities `json:"rules,omitempty"`
	// ExemptAnnotation overrides the name of the exemption annotation, on
	// objects and on AppProjects; empty means ExemptAnnotation.
	ExemptAnnotation string `json:"exemptAnnotation,omitempty"`
	// AllowObjectExemptions lets an object's own exemption annotation exempt
	// it from hygiene rules; nil means true. When false, an object
	// annotation exempts nothing and is reported as exemption-not-allowed.
	AllowObjectExemptions *bool `json:"allowObjectExemptions,omitempty"`
	// Exemptions are the operator's exemptions: the only way, besides an
	// AppProject's exemption annotation, to exempt an object from a
	// boundary rule (see exemptions.go).
	Exemptions []Exemption `json:"exemptions,omitempty"`
	// BoundaryRules makes more rules (user rule ids, hygiene rules)
	// boundary rules, which an object's own annotation cannot exempt.
	BoundaryRules []string `json:"boundaryRules,omitempty"`
	// TollgateNamespace is the namespace tollgate runs in; empty means
	// DefaultTollgateNamespace. It is protected unless ProtectedNamespaces
	// says otherwise.
	TollgateNamespace string `json:"tollgateNamespace,omitempty"`
	// ProtectedNamespaces replaces the default protected namespaces
	// (TollgateNamespace, kube-system, kube-public, kube-node-lease) when
	// set; an empty list protects none.
	ProtectedNamespaces []string `json:"protectedNamespaces,omitempty"`
	// ImplicitDefaultProject makes a missing "default" AppProject Argo CD's
	// allow-all default (Argo CD creates one when it starts). False: an
	// Application of a "default" project that does not exist is
	// project-not-found. Only callers that know the project set from a
	// cluster read it (BuildInputs' InputOptions).
	ImplicitDefaultProject bool `json:"implicitDefaultProject,omitempty"`
	// TrackingMethod is how objects are tied to the Application that
	// manages them, Argo CD's application.resourceTrackingMethod. The
	// webhook reads it to find an object's Application (default
	// annotation+label there); the engine marks what it applies with it and
	// recognises its objects by it (default annotation, as in Argo CD 3).
	TrackingMethod TrackingMethod `json:"trackingMethod,omitempty"`

	// source is the file the configuration was loaded from, for errors.
	source string
}

// TrackingMethod says how the Application that manages an object is
// recorded on it, with the names of Argo CD's
// application.resourceTrackingMethod. It is the configuration's spelling of
// v1alpha1.TrackingMethod (in api/v1alpha1, with the one implementation of
// tracking), which this leaf package does not import: whoever reads the
// configuration converts it.
type TrackingMethod string

// Tracking methods.
const (
	// TrackingAnnotation is the argocd.argoproj.io/tracking-id annotation,
	// "<app>:<group>/<kind>:<namespace>/<name>".
	TrackingAnnotation TrackingMethod = "annotation"
	// TrackingLabel is the app.kubernetes.io/instance label, "<app>".
	TrackingLabel TrackingMethod = "label"
	// TrackingAnnotationAndLabel is both; the annotation is the one read
	// when present.
	TrackingAnnotationAndLabel TrackingMethod = "annotation+label"
)

// Valid reports whether m is a tracking method, or empty (the reader's
// default).
func (m TrackingMethod) Valid() bool {
	switch m {
	case "", TrackingAnnotation, TrackingLabel, TrackingAnnotationAndLabel:
		return true
	}
	return false
}

// RuleSeverities maps rule ids to severities. When decoded from JSON or YAML
// it accepts only deny, warn and off, and reads a YAML 1.1 boolean false
// (what an unquoted `off` becomes) as off.
type RuleSeverities map[string]Severity

// UnmarshalJSON decodes and validates severities.
func (r *RuleSeverities) UnmarshalJSON(b []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	if raw == nil {
		*r = nil
		return nil
	}
	out := make(RuleSeverities, len(raw))
	for id, v := range raw {
		switch v := v.(type) {
		case string:
			out[id] = Severity(v)
		case bool:
			if v {
				return fmt.Errorf("rules: rule %q: invalid severity true (want deny, warn or off)", id)
			}
			out[id] = SeverityOff
		default:
			return fmt.Errorf("rules: rule %q: invalid severity %v (want deny, warn or off)", id, v)
		}
	}
	if err := out.validate(); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	*r = out
	return nil
}

// ruleIDPattern is what a rule id looks like: the built-in kebab-case ids,
// Rego package paths (main, kubernetes.security) and ids user policies set.
var ruleIDPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/:-]*[A-Za-z0-9])?$`)

// validate checks rule ids and severities, in id order.
func (r RuleSeverities) validate() error {
	ids := make([]string, 0, len(r))
	for id := range r {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if !ruleIDPattern.MatchString(id) {
			return fmt.Errorf("rule %q: invalid rule id", id)
		}
		switch s := r[id]; s {
		case SeverityDeny, SeverityWarn, SeverityOff:
		default:
			return fmt.Errorf("rule %q: invalid severity %q (want deny, warn or off)", id, s)
		}
	}
	return nil
}

// dnsLabel is a Kubernetes namespace name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// annotationName is a Kubernetes annotation key: an optional DNS subdomain
// prefix and a name.
var annotationName = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// Validate checks the configuration on its own: namespace and annotation
// syntax, rule id syntax and severities. Whether each rule id exists is
// checked by New, which knows the user policies.
func (c Config) Validate() error {
	if c.ArgoCDNamespace != "" && !dnsLabel.MatchString(c.ArgoCDNamespace) {
		return fmt.Errorf("argocdNamespace: invalid namespace name %q", c.ArgoCDNamespace)
	}
	if c.ExemptAnnotation != "" && !annotationName.MatchString(c.ExemptAnnotation) {
		return fmt.Errorf("exemptAnnotation: invalid annotation name %q", c.ExemptAnnotation)
	}
	if err := c.Rules.validate(); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	if c.TollgateNamespace != "" && !dnsLabel.MatchString(c.TollgateNamespace) {
		return fmt.Errorf("tollgateNamespace: invalid namespace name %q", c.TollgateNamespace)
	}
	for i, ns := range c.ProtectedNamespaces {
		if !dnsLabel.MatchString(ns) {
			return fmt.Errorf("protectedNamespaces[%d]: invalid namespace name %q", i, ns)
		}
	}
	for i, id := range c.BoundaryRules {
		if !ruleIDPattern.MatchString(id) {
			return fmt.Errorf("boundaryRules[%d]: invalid rule id %q", i, id)
		}
	}
	for i, x := range c.Exemptions {
		if err := x.validate(); err != nil {
			return fmt.Errorf("exemptions[%d]: %w", i, err)
		}
	}
	if !c.TrackingMethod.Valid() {
		return fmt.Errorf("trackingMethod: invalid tracking method %q (want annotation, label or annotation+label)", c.TrackingMethod)
	}
	return nil
}

// LoadConfig reads a YAML configuration file:
//
//	argocdNamespace: argocd
//	rules:
//	  no-latest-tag: warn
//	  default-project: off
//
// Unknown fields and invalid severities are errors naming the file. Unknown
// rule ids are reported by New, which also knows the user policies' ids.
func LoadConfig(path string) (Config, error) {
	data, err := bounded.ReadFile(path, maxConfigBytes)
	if err != nil {
		return Config{}, fmt.Errorf("load config: %w", err)
	}
	cfg, err := parseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("load config %s: %w", path, err)
	}
	cfg.source = path
	return cfg, nil
}

// parseConfig decodes and validates a YAML configuration document.
func parseConfig(data []byte) (Config, error) {
	var cfg Config
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if err := DecodeConfigYAML(data, &cfg); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// DecodeConfigYAML decodes a YAML configuration document into v strictly
// (unknown fields are errors) and strips the decoder's layering prefixes so
// the message names the offending field plainly. Configurations that embed
// Config (the webhook's) decode with it too.
func DecodeConfigYAML(data []byte, v any) error {
	err := yaml.UnmarshalStrict(data, v)
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, p := range []string{"error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return errors.New(msg)
}

// ArgoCDNamespaceOrDefault returns the configured Argo CD namespace or
// DefaultArgoCDNamespace.
func (c Config) ArgoCDNamespaceOrDefault() string {
	if c.ArgoCDNamespace == "" {
		return DefaultArgoCDNamespace
	}
	return c.ArgoCDNamespace
}

// ExemptAnnotationOrDefault returns the configured exemption annotation or
// ExemptAnnotation.
func (c Config) ExemptAnnotationOrDefault() string {
	if c.ExemptAnnotation == "" {
		return ExemptAnnotation
	}
	return c.ExemptAnnotation
}

// checkRuleIDs reports the first configured rule id that is not known: in
// rules, boundaryRules or an exemption.
func (c Config) checkRuleIDs(known map[string]bool) error {
	ids := make([]string, 0, len(c.Rules))
	for id := range c.Rules {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	check := func(field, id string) error {
		if known[id] {
			return nil
		}
		where := "config"
		if c.source != "" {
			where = "config " + c.source
		}
		return fmt.Errorf("%s: %s: unknown rule id %q (not a built-in rule, a user policy package or rule id, or a declared check rule)", where, field, id)
	}
	for _, id := range ids {
		if err := check("rules", id); err != nil {
			return err
		}
	}
	for i, id := range c.BoundaryRules {
		if err := check(fmt.Sprintf("boundaryRules[%d]", i), id); err != nil {
			return err
		}
	}
	for i, x := range c.Exemptions {
		for j, id := range x.Rules {
			if id == "*" {
				continue
			}
			if err := check(fmt.Sprintf("exemptions[%d].rules[%d]", i, j), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// TollgateNamespaceOrDefault returns the configured namespace of tollgate
// or DefaultTollgateNamespace.
func (c Config) TollgateNamespaceOrDefault() string {
	if c.TollgateNamespace == "" {
		return DefaultTollgateNamespace
	}
	return c.TollgateNamespace
}

// Protected returns the protected namespaces: ProtectedNamespaces when
// set, else tollgate's own namespace and the control plane's.
func (c Config) Protected() []string {
	if c.ProtectedNamespaces != nil {
		return slices.Clone(c.ProtectedNamespaces)
	}
	return []string{c.TollgateNamespaceOrDefault(), "kube-system", "kube-public", "kube-node-lease"}
}

// objectExemptionsAllowed reports whether an object's own annotation may
// exempt it from hygiene rules.
func (c Config) objectExemptionsAllowed() bool {
	return c.AllowObjectExemptions == nil || *c.AllowObjectExemptions
}
