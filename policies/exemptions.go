package policies

import (
	"fmt"
	pathpkg "path"
	"strings"
)

// Who may exempt what. A rule restrains someone; whoever it restrains must
// not be able to switch it off. Rules therefore come in two kinds:
//
//   - Boundary rules (RuleInfo.Boundary, plus Config.BoundaryRules) keep a
//     team inside its AppProject: project-*-denied, project-not-found,
//     no-argocd-destination, protected-namespace, app-namespace,
//     destination-server-and-name and exemption-not-allowed. Only authority
//     exempts from them: the operator's configuration (Config.Exemptions)
//     or the AppProject the object is judged against (its exemption
//     annotation), never the object under review, which a tenant writes.
//   - Hygiene rules (the rest, user rules included unless BoundaryRules
//     names them) guard a team against its own mistakes. The object's own
//     exemption annotation may exempt from them, unless
//     Config.AllowObjectExemptions is false.
//
// An object annotation that names a boundary rule (or any object annotation
// when object exemptions are off) exempts nothing and is itself reported as
// exemption-not-allowed, so nobody believes it worked.

// ruleExemptionNotAllowed is the rule id of a refused object exemption.
const ruleExemptionNotAllowed = "exemption-not-allowed"

// Exemption is one entry of the operator's exemptions: the rules it exempts
// from and the objects it applies to. Every match field is a glob (path.Match
// syntax: *, ?, [a-z]); an empty field matches anything.
type Exemption struct {
	// Rules are the rule ids exempted; "*" is every rule. Required.
	Rules []string `json:"rules"`
	// Project matches the AppProject the object is judged against: its
	// Application's project, or the AppProject itself.
	Project string `json:"project,omitempty"`
	// Application matches the Application that renders or tracks the
	// object, or the Application itself.
	Application string `json:"application,omitempty"`
	// Namespace matches the object's namespace (for a namespaced object
	// without one, its Application's destination namespace); cluster-scoped
	// objects have the namespace "".
	Namespace string `json:"namespace,omitempty"`
	// Group and Kind match the object's API group ("" is the core group)
	// and kind.
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
	// Name matches the object's metadata.name.
	Name string `json:"name,omitempty"`
	// Reason says why, for whoever reads the configuration; not used.
	Reason string `json:"reason,omitempty"`
}

// validate checks that the entry names rules and that its globs compile.
func (x Exemption) validate() error {
	if len(x.Rules) == 0 {
		return fmt.Errorf("rules: at least one rule id (or \"*\") is required")
	}
	for i, id := range x.Rules {
		if id != "*" && !ruleIDPattern.MatchString(id) {
			return fmt.Errorf("rules[%d]: invalid rule id %q", i, id)
		}
	}
	for _, f := range [...]struct{ name, glob string }{
		{"project", x.Project}, {"application", x.Application}, {"namespace", x.Namespace},
		{"group", x.Group}, {"kind", x.Kind}, {"name", x.Name},
	} {
		if _, err := pathpkg.Match(f.glob, ""); err != nil {
			return fmt.Errorf("%s: invalid glob %q: %w", f.name, f.glob, err)
		}
	}
	return nil
}

// matches reports whether the entry applies to the subject.
func (x Exemption) matches(s subject) bool {
	return globMatch(x.Project, s.project) && globMatch(x.Application, s.application) &&
		globMatch(x.Namespace, s.namespace) && globMatch(x.Group, s.group) &&
		globMatch(x.Kind, s.kind) && globMatch(x.Name, s.name)
}

// globMatch matches value against a validated glob; "" matches anything.
func globMatch(glob, value string) bool {
	if glob == "" {
		return true
	}
	ok, _ := pathpkg.Match(glob, value)
	return ok
}

// subject is what an operator's exemption matches an Input on.
type subject struct {
	project, application, namespace, group, kind, name string
}

// subjectOf describes the object of in for exemption matching.
func subjectOf(in Input) subject {
	obj := in.Object
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	s := subject{
		application: objectName(in.Application),
		namespace:   objectNamespace(obj),
		group:       GroupOf(apiVersion),
		kind:        kind,
		name:        objectName(obj),
	}
	switch {
	case len(in.Project) > 0:
		s.project = objectName(in.Project)
	case len(in.Application) > 0:
		s.project = projectNameOf(in.Application)
	case isKind(obj, "argoproj.io", "AppProject"):
		s.project = s.name
	}
	if !in.Context.ClusterScoped && !sameMap(in.Application, obj) {
		s.namespace = effectiveNamespace(Item{Object: obj, Application: in.Application})
	}
	return s
}

// ruleSet is a parsed exemption annotation: rule ids, or every rule.
type ruleSet struct {
	all   bool
	rules []string
}

// covers reports whether rule is in the set.
func (x ruleSet) covers(rule string) bool {
	if x.all {
		return true
	}
	for _, r := range x.rules {
		if r == rule {
			return true
		}
	}
	return false
}

// add adds the rule ids of one exemption (annotation value or list).
func (x *ruleSet) add(ids ...string) {
	for _, id := range ids {
		switch id = strings.TrimSpace(id); id {
		case "":
		case "*":
			x.all = true
		default:
			x.rules = append(x.rules, id)
		}
	}
}

// parseRuleSet reads the exemption annotation key of obj: a comma-separated
// list of rule ids, or "*" for all rules.
func parseRuleSet(obj map[string]any, key string) ruleSet {
	var x ruleSet
	if val, ok := nestedString(obj, "metadata", "annotations", key); ok {
		x.add(strings.Split(val, ",")...)
	}
	return x
}

// isBoundary reports whether rule is a boundary rule.
func (e *Evaluator) isBoundary(rule string) bool {
	if r, ok := builtinRule(rule); ok && r.Boundary {
		return true
	}
	return e.boundary[rule]
}

// authorityExemptions are the rules that authority exempts the object of
// in from: the operator's matching exemptions and the exemption annotation
// of the AppProject the object is judged against. An AppProject reviewed
// on its own (not rendered by an Application) is its own authority.
//
// An Application the object merely claims (Context.ClaimedApplication)
// lends it no authority: the project's annotation and the operator's
// exemptions that match on project or application are left out.
func (e *Evaluator) authorityExemptions(in Input) ruleSet {
	claimed := in.Context.ClaimedApplication
	var x ruleSet
	switch {
	case len(in.Project) > 0 && !claimed:
		x = parseRuleSet(in.Project, e.exemptKey)
	case selfGoverned(in):
		x = parseRuleSet(in.Object, e.exemptKey)
	}
	if len(e.cfg.Exemptions) > 0 {
		s := subjectOf(in)
		for _, ex := range e.cfg.Exemptions {
			if claimed && (ex.Project != "" || ex.Application != "") {
				continue
			}
			if ex.matches(s) {
				x.add(ex.Rules...)
			}
		}
	}
	return x
}

// selfGoverned reports whether the object of in is an AppProject reviewed
// on its own, not as a resource an Application deploys: its annotation is
// then the project's own authority.
func selfGoverned(in Input) bool {
	return len(in.Application) == 0 && isKind(in.Object, "argoproj.io", "AppProject")
}

// objectExemptions are the hygiene rules the object's own annotation
// exempts it from, and the exemption-not-allowed violation its annotation
// earns when it names a boundary rule or object exemptions are off. The
// object is its own authority only as an AppProject reviewed on its own,
// which authorityExemptions covers.
func (e *Evaluator) objectExemptions(in Input) (ruleSet, *Violation) {
	val, _ := nestedString(in.Object, "metadata", "annotations", e.exemptKey)
	named := parseRuleSet(in.Object, e.exemptKey)
	if selfGoverned(in) || (!named.all && len(named.rules) == 0) {
		return ruleSet{}, nil
	}
	path := []any{"metadata", "annotations", e.exemptKey}
	if !e.cfg.objectExemptionsAllowed() {
		return ruleSet{}, &Violation{
			Rule: ruleExemptionNotAllowed,
			Message: fmt.Sprintf("%s carries the exemption annotation %s=%q, but object exemptions are off (allowObjectExemptions: false); exemptions come from the operator's configuration (exemptions:) or the AppProject's %s annotation",
				describeObject(in.Object), e.exemptKey, val, e.exemptKey),
			Path: path,
		}
	}
	var hygiene ruleSet
	hygiene.all = named.all
	var refused []string
	for _, r := range named.rules {
		if e.isBoundary(r) {
			refused = append(refused, r)
		} else {
			hygiene.rules = append(hygiene.rules, r)
		}
	}
	if len(refused) == 0 {
		return hygiene, nil
	}
	return hygiene, &Violation{
		Rule: ruleExemptionNotAllowed,
		Message: fmt.Sprintf("%s names the boundary rule(s) %s in its %s annotation, which exempts nothing from them; only the operator's configuration (exemptions:) or the AppProject's %s annotation can exempt from a boundary rule",
			describeObject(in.Object), quoteAll(refused), e.exemptKey, e.exemptKey),
		Path: path,
	}
}

// describeObject names an object in a message: `Deployment "web"`.
func describeObject(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	if kind == "" {
		kind = "object"
	}
	name := objectName(obj)
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("%s %q", kind, name)
}

// quoteAll quotes and joins ids: `"a", "b"`.
func quoteAll(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// finish applies exemptions and severity overrides, drops rules that are
// off, and fills in each violation's object.
func (e *Evaluator) finish(in Input, vs []Violation) []Violation {
	authority := e.authorityExemptions(in)
	object, refused := e.objectExemptions(in)
	if refused != nil {
		vs = append(vs, *refused)
	}
	ref := objectRef(in.Object)
	out := make([]Violation, 0, len(vs))
	for _, v := range vs {
		if authority.covers(v.Rule) || (object.covers(v.Rule) && !e.isBoundary(v.Rule)) {
			continue
		}
		if s, ok := e.cfg.Rules[v.Rule]; ok {
			v.Severity = s
		}
		if v.Severity == "" {
			if s, ok := e.checkDefaults[v.Rule]; ok {
				v.Severity = s
			} else {
				v.Severity = defaultSeverity(v.Rule)
			}
		}
		if v.Severity == SeverityOff {
			continue
		}
		if v.Object == (ObjectRef{}) {
			v.Object = ref
		}
		out = append(out, v)
	}
	return out
}
