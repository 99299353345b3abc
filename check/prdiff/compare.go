package prdiff

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/check"
	"github.com/tollgate-dev/tollgate/internal/jsonvalue"
	"github.com/tollgate-dev/tollgate/internal/objdiff"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
)

// Compare pairs the snapshots of base and head into a report.
func Compare(base, head check.Snapshot) Report {
	var r Report
	bg, hg := groups(base), groups(head)
	for _, key := range slices.SortedFunc(maps.Keys(union(bg, hg)), compareKeys) {
		g := compareGroup(key, bg[key], hg[key])
		g.NotRendered = notRendered(head, key)
		if failedAt(head, key) {
			g.Status, g.Objects, g.Unchanged = Failed, nil, 0
			r.Groups = append(r.Groups, g)
			continue
		}
		for _, o := range g.Objects {
			r.Summary.Objects.add(o.Status)
			for _, f := range o.Findings {
				r.Summary.count(f)
			}
		}
		r.Summary.Objects.Unchanged += g.Unchanged
		if key.kind == GroupApplication {
			r.Summary.Applications.add(g.Status)
		}
		r.Groups = append(r.Groups, g)
	}
	// Denials on objects nobody changed still count as existing.
	for _, c := range head.Objects {
		if !listed(r.Groups, c.Result) {
			for _, v := range c.Result.Violations {
				r.Summary.count(Finding{Severity: string(v.Severity)})
			}
		}
	}
	r.Errors, r.BaseErrors = errorsOf(head.Report), errorsOf(base.Report)
	r.Summary.Errors = len(r.Errors)
	for _, n := range head.Notes {
		r.Notes = append(r.Notes, n.String())
	}
	return r
}

// count adds f to the finding counts.
func (s *Summary) count(f Finding) {
	deny := f.Severity == string(policies.SeverityDeny)
	switch {
	case f.Introduced && deny:
		s.IntroducedDenials++
	case f.Introduced:
		s.IntroducedWarnings++
	case deny:
		s.ExistingDenials++
	default:
		s.ExistingWarnings++
	}
}

// groupKey names a group.
type groupKey struct{ kind, name string }

// compareKeys orders Applications first, then directories, each by name.
func compareKeys(a, b groupKey) int {
	rank := func(k groupKey) int {
		if k.kind == GroupApplication {
			return 0
		}
		return 1
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.name, b.name))
}

// member is one object of a group at one revision, by its key.
type member struct {
	key    string
	result report.Result
	object map[string]any
}

// groups sorts the objects of a snapshot into groups, and the
// Applications it holds (their own documents and the ones that failed to
// render) into empty groups of their own, so that an Application that
// renders nothing still pairs.
func groups(s check.Snapshot) map[groupKey][]member {
	out := map[groupKey][]member{}
	seen := map[string]int{}
	for _, c := range s.Objects {
		key := groupOf(c.Result)
		k := objectKey(key, c.Object)
		seen[k]++
		if n := seen[k]; n > 1 {
			k = fmt.Sprintf("%s#%d", k, n)
		}
		out[key] = append(out[key], member{key: k, result: c.Result, object: c.Object})
		if isApplication(c.Object) {
			present(out, groupKey{GroupApplication, c.Result.Name})
		}
	}
	for _, r := range s.Report.Results {
		if r.Error != "" && r.Kind == GroupApplication {
			present(out, groupKey{GroupApplication, r.Name})
		}
	}
	return out
}

// present records that the group of key exists, with or without members.
func present(gs map[groupKey][]member, key groupKey) {
	if gs[key] == nil {
		gs[key] = []member{}
	}
}

// groupOf is the group of a result: its Application's, else its
// directory's.
func groupOf(r report.Result) groupKey {
	if r.Application != "" {
		return groupKey{GroupApplication, r.Application}
	}
	return groupKey{GroupPath, path.Dir(r.File)}
}

// objectKey identifies an object within its group: API group, kind,
// namespace and name.
func objectKey(g groupKey, obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = ""
	}
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return strings.Join([]string{g.kind, g.name, group, kind, ns, name}, "\x00")
}

func isApplication(obj map[string]any) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return kind == GroupApplication && strings.HasPrefix(apiVersion, "argoproj.io/")
}

func union[K comparable, V any](a, b map[K]V) map[K]bool {
	out := map[K]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// compareGroup compares the members of one group at base and head; nil
// slices mean the group is absent on that side.
func compareGroup(key groupKey, base, head []member) Group {
	g := Group{Kind: key.kind, Name: key.name}
	byKey := map[string]member{}
	for _, m := range base {
		byKey[m.key] = m
	}
	matched := map[string]bool{}
	for _, h := range head {
		b, ok := byKey[h.key]
		matched[h.key] = ok
		var o Object
		if ok {
			o = compareObject(&b, &h)
		} else {
			o = compareObject(nil, &h)
		}
		if o.Status == Unchanged && !introduces(o.Findings) {
			g.Unchanged++
			continue
		}
		g.Objects = append(g.Objects, o)
	}
	for _, b := range base {
		if !matched[b.key] {
			g.Objects = append(g.Objects, compareObject(&b, nil))
		}
	}
	slices.SortStableFunc(g.Objects, func(a, b Object) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	switch {
	case base == nil && head != nil:
		g.Status = Added
	case head == nil:
		g.Status = Removed
	case len(g.Objects) > 0 && changes(g.Objects):
		g.Status = Changed
	default:
		g.Status = Unchanged
	}
	return g
}

func introduces(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Introduced })
}

func changes(objs []Object) bool {
	return slices.ContainsFunc(objs, func(o Object) bool { return o.Status != Unchanged })
}

// compareObject compares one object's two sides; either may be nil.
func compareObject(base, head *member) Object {
	ref := head
	if ref == nil {
		ref = base
	}
	apiVersion, _ := ref.object["apiVersion"].(string)
	o := Object{
		APIVersion: apiVersion, Kind: ref.result.Kind, Namespace: ref.result.Namespace, Name: ref.result.Name,
		File: ref.result.File, Line: ref.result.Line,
	}
	var a, b map[string]any
	if base != nil {
		a = normalized(base.object)
	}
	if head != nil {
		b = normalized(head.object)
	}
	if o.Kind == "Secret" && !strings.Contains(apiVersion, "/") {
		objdiff.HideSecretData(a, b)
	}
	switch {
	case base == nil:
		o.Status = Added
	case head == nil:
		o.Status = Removed
	case reflect.DeepEqual(a, b):
		o.Status = Unchanged
	default:
		o.Status = Changed
	}
	if o.Status != Unchanged {
		text, err := objdiff.Unified(a, b, "base", "head")
		if err != nil {
			text = "(no diff: " + err.Error() + ")\n"
		}
		o.Diff = text
	}
	if head != nil {
		had := map[string]bool{}
		if base != nil {
			for _, v := range base.result.Violations {
				had[v.Rule+"\x00"+v.Message] = true
			}
		}
		for _, v := range head.result.Violations {
			o.Findings = append(o.Findings, Finding{
				Rule: v.Rule, Severity: string(v.Severity), Message: v.Message, Line: v.Line,
				Introduced: !had[v.Rule+"\x00"+v.Message],
			})
		}
	}
	return o
}

// trackingAnnotation is Argo CD's tracking id, set on live objects, noise
// in a rendered one.
const trackingAnnotation = "argocd.argoproj.io/tracking-id"

// normalized returns a copy of obj without what the API server or the
// controller sets (status, managedFields, resourceVersion, uid,
// generation, creationTimestamp, the tracking annotation), which a
// manifest may carry but Argo CD's diff leaves out.
func normalized(obj map[string]any) map[string]any {
	out := jsonvalue.Copy(obj).(map[string]any)
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		for _, k := range []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink"} {
			delete(md, k)
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, trackingAnnotation)
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return out
}

// listed reports whether r's object is among the groups' listed objects.
func listed(gs []Group, r report.Result) bool {
	key := groupOf(r)
	for _, g := range gs {
		if g.Kind != key.kind || g.Name != key.name {
			continue
		}
		for _, o := range g.Objects {
			if o.Kind == r.Kind && o.Namespace == r.Namespace && o.Name == r.Name && o.Status != Removed {
				return true
			}
		}
	}
	return false
}

// failedAt reports whether the Application of key failed to render in s.
func failedAt(s check.Snapshot, key groupKey) bool {
	if key.kind != GroupApplication {
		return false
	}
	return slices.ContainsFunc(s.Report.Results, func(r report.Result) bool {
		return r.Error != "" && r.Kind == GroupApplication && r.Name == key.name
	})
}

// notRendered says why the head's Application of key has no objects it
// rendered, from the head's notes; "" when it has or is no Application.
func notRendered(head check.Snapshot, key groupKey) string {
	if key.kind != GroupApplication {
		return ""
	}
	if failedAt(head, key) {
		return "it failed to render at the head (see the errors)"
	}
	prefix := fmt.Sprintf("Application %q ", key.name)
	for _, n := range head.Notes {
		if msg, ok := strings.CutPrefix(n.Message, prefix); ok {
			return msg
		}
	}
	for _, n := range head.Notes {
		if strings.HasPrefix(n.Message, "Applications are not rendered") {
			return n.Message
		}
	}
	return ""
}

// errorsOf lists the error results of a report.
func errorsOf(r report.Report) []Error {
	var out []Error
	for _, res := range r.Results {
		if res.Error != "" {
			out = append(out, Error{File: res.File, Line: res.Line, Application: res.Application, Message: res.Error})
		}
	}
	return out
}
