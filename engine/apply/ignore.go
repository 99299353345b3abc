package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gobwas/glob"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jqTimeout bounds one jq evaluation, as Argo CD does.
const jqTimeout = time.Second

// IgnoreDifference is one entry of an Application's
// spec.ignoreDifferences: fields that do not count as drift.
type IgnoreDifference struct {
	// Group and Kind select objects: globs, as Argo CD matches them ("*"
	// matches any; Group "" is the core group).
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// Name and Namespace restrict the rule to one object when set.
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers are RFC 6901 pointers such as /spec/replicas.
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq path expressions such as
	// .spec.template.spec.containers[] | select(.name == "app") | .image.
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers ignore every field these field managers own in
	// the live object.
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// fieldPath is a concrete path into an object: string keys and int indexes.
type fieldPath []any

func (p fieldPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, s)
		}
	}
	return b.String()
}

// ignoreRule is a compiled IgnoreDifference.
type ignoreRule struct {
	IgnoreDifference
	// group and kind match the object's API group and kind: globs, as
	// Argo CD matches them (gobwas/glob, no separators).
	group, kind *glob.Pattern
	pointers    [][]string
	jq          []*gojq.Code
}

// compileIgnore parses pointers and compiles jq expressions once.
func compileIgnore(rules []IgnoreDifference) ([]ignoreRule, error) {
	out := make([]ignoreRule, 0, len(rules))
	for i, r := range rules {
		c := ignoreRule{IgnoreDifference: r}
		var err error
		if c.group, err = glob.Compile(r.Group); err != nil {
			return nil, fmt.Errorf("ignoreDifferences[%d]: group %q: %w", i, r.Group, err)
		}
		if c.kind, err = glob.Compile(r.Kind); err != nil {
			return nil, fmt.Errorf("ignoreDifferences[%d]: kind %q: %w", i, r.Kind, err)
		}
		for _, p := range r.JSONPointers {
			tokens, err := parsePointer(p)
			if err != nil {
				return nil, fmt.Errorf("ignoreDifferences[%d]: json pointer %q: %w", i, p, err)
			}
			c.pointers = append(c.pointers, tokens)
		}
		for _, e := range r.JQPathExpressions {
			q, err := gojq.Parse("path(" + e + ")")
			if err != nil {
				return nil, fmt.Errorf("ignoreDifferences[%d]: jq path expression %q: %w", i, e, err)
			}
			if r := jqRefused(q); r != "" {
				return nil, fmt.Errorf("ignoreDifferences[%d]: jq path expression %q: %s is not allowed in a path expression (its output could grow without bound)", i, e, r)
			}
			code, err := gojq.Compile(q)
			if err != nil {
				return nil, fmt.Errorf("ignoreDifferences[%d]: jq path expression %q: %w", i, e, err)
			}
			c.jq = append(c.jq, code)
		}
		out = append(out, c)
	}
	return out, nil
}

// KeepIgnored copies into obj the live value of every field of obj the
// rules matching live ignore, and drops those live does not have, so that
// writing obj leaves them as they are.
func KeepIgnored(ctx context.Context, obj, live *unstructured.Unstructured, rules []IgnoreDifference) error {
	compiled, err := compileIgnore(rules)
	if err != nil {
		return err
	}
	keepIgnored(ctx, obj, live, compiled)
	return nil
}

// matches reports whether the rule applies to obj.
func (r ignoreRule) matches(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return r.group.Match(gvk.Group) && r.kind.Match(gvk.Kind) &&
		(r.Name == "" || r.Name == obj.GetName()) &&
		(r.Namespace == "" || r.Namespace == obj.GetNamespace())
}

// ignoredPaths resolves the rules matching obj against target (obj itself
// or the other side of a comparison). Managed fields are read from live.
func ignoredPaths(ctx context.Context, rules []ignoreRule, target map[string]any, live *unstructured.Unstructured) []fieldPath {
	var out []fieldPath
	var jqInput any
	for _, r := range rules {
		if !r.matches(live) {
			continue
		}
		for _, tokens := range r.pointers {
			if p, ok := resolvePointer(target, tokens); ok {
				out = append(out, p)
			}
		}
		for _, code := range r.jq {
			if jqInput == nil {
				jqInput = toJQ(target)
			}
			out = append(out, jqPaths(ctx, code, jqInput)...)
		}
		if len(r.ManagedFieldsManagers) > 0 {
			out = append(out, managedPaths(live, r.ManagedFieldsManagers, target)...)
		}
	}
	return out
}

// parsePointer splits an RFC 6901 pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, fmt.Errorf("empty pointer (the whole object cannot be ignored)")
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("must start with /")
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

// resolvePointer returns the concrete path of tokens in obj, if it exists.
func resolvePointer(obj map[string]any, tokens []string) (fieldPath, bool) {
	var cur any = obj
	p := make(fieldPath, 0, len(tokens))
	for _, t := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[t]
			if !ok {
				return nil, false
			}
			p, cur = append(p, t), v
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			p, cur = append(p, i), c[i]
		default:
			return nil, false
		}
	}
	return p, true
}

// jqPaths runs a compiled path(...) query. An expression that does not fit
// this object (iterating null, say) yields no paths rather than an error, so
// that one rule can serve objects of different shapes.
func jqPaths(ctx context.Context, code *gojq.Code, input any) []fieldPath {
	ctx, cancel := context.WithTimeout(ctx, jqTimeout)
	defer cancel()
	var out []fieldPath
	iter := code.RunWithContext(ctx, input)
	for {
		v, ok := iter.Next()
		if !ok {
			return out
		}
		if _, isErr := v.(error); isErr {
			return out
		}
		if p, ok := toFieldPath(v); ok {
			out = append(out, p)
		}
		if len(out) == maxJQPaths {
			return out
		}
	}
}

// toFieldPath converts a jq path (an array of strings and numbers).
func toFieldPath(v any) (fieldPath, bool) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	p := make(fieldPath, 0, len(arr))
	for _, s := range arr {
		switch s := s.(type) {
		case string:
			p = append(p, s)
		case int:
			p = append(p, s)
		case float64:
			p = append(p, int(s))
		default:
			return nil, false
		}
	}
	return p, true
}

// toJQ converts an unstructured value to the types gojq accepts (int
// instead of int64).
func toJQ(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = toJQ(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = toJQ(e)
		}
		return l
	case int64:
		return int(v)
	case int32:
		return int(v)
	case float32:
		return float64(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return int(i)
		}
		f, _ := v.Float64()
		return f
	}
	return v
}
