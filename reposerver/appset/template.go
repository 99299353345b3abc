package appset

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/gosimple/slug"
	"sigs.k8s.io/yaml"
)

// renderer renders strings with one parameter set: {{param}} substitution,
// or Go templates when goTemplate is set.
type renderer struct {
	goTemplate bool
	// options are the validated goTemplateOptions.
	options []string
}

// newRenderer returns the renderer of an ApplicationSet, refusing the Go
// template options text/template does not know (it would panic on them).
func newRenderer(goTemplate bool, options []string) (renderer, error) {
	for i, o := range options {
		switch o {
		case "missingkey=default", "missingkey=invalid", "missingkey=zero", "missingkey=error":
		default:
			return renderer{}, fmt.Errorf("spec.goTemplateOptions[%d]: unknown option %q (want missingkey=default, invalid, zero or error)", i, o)
		}
	}
	return renderer{goTemplate: goTemplate, options: options}, nil
}

// hasTag is Argo CD's test for a string to substitute in: "{{" and a later
// "}}" on one line.
var hasTag = regexp.MustCompile(`.*{{.*}}.*`)

// replace renders s with params.
func (r renderer) replace(s string, params map[string]any) (string, error) {
	if r.goTemplate {
		return r.execute(s, params)
	}
	if !hasTag.MatchString(s) {
		return s, nil
	}
	return substitute(s, params)
}

// substitute replaces each {{ key }} of s by the string parameter key, and
// leaves a tag whose parameter is missing, empty or not a string as it is,
// as Argo CD's fasttemplate substitution does. A "{{" without a closing
// "}}" is an error.
func substitute(s string, params map[string]any) (string, error) {
	var b strings.Builder
	rest := s
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:open])
		rest = rest[open+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return "", fmt.Errorf("invalid template %q: %q has no closing %q", s, "{{", "}}")
		}
		tag := rest[:end]
		rest = rest[end+2:]
		// As Argo CD's fasttemplate: a known parameter is replaced, an
		// empty one included; an unknown one stays as written.
		if v, ok := params[strings.TrimSpace(tag)].(string); ok && strings.TrimSpace(tag) != "" {
			b.WriteString(v)
		} else {
			b.WriteString("{{" + tag + "}}")
		}
	}
}

// execute renders s as a Go template over params.
func (r renderer) execute(s string, params map[string]any) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	t, err := template.New("").Funcs(funcs).Parse(s)
	if err != nil {
		return "", fmt.Errorf("failed to parse template %s: %w", s, err)
	}
	if len(r.options) > 0 {
		t = t.Option(r.options...)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, params); err != nil {
		return "", fmt.Errorf("failed to execute go template %s: %w", s, err)
	}
	return b.String(), nil
}

// renderValue renders every string of a decoded JSON value, map keys
// included, as Argo CD renders each string field of the template on its
// own: a template cannot span fields, and numbers and booleans are not
// templated.
func (r renderer) renderValue(v any, params map[string]any) (any, error) {
	switch v := v.(type) {
	case string:
		return r.replace(v, params)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			key, err := r.replace(k, params)
			if err != nil {
				return nil, err
			}
			if out[key], err = r.renderValue(e, params); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = r.renderValue(e, params); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// funcs are the template functions of goTemplate: Sprig's generic
// functions without those that read the controller's environment or the
// network, and Argo CD's own.
var funcs = func() template.FuncMap {
	m := sprig.GenericFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(m, name)
	}
	m["normalize"] = SanitizeName
	m["slugify"] = slugify
	m["toYaml"] = toYAML
	m["fromYaml"] = fromYAML
	m["fromYamlArray"] = fromYAMLArray
	return m
}()

// SanitizeName makes name a valid Kubernetes object name as Argo CD's
// normalize does: lower case, every character other than a-z, 0-9, "-" and
// "." replaced by "-", at most 253 characters, no "-" or "." at either end.
func SanitizeName(name string) string {
	name = strings.ToLower(name)
	name = invalidNameChars.ReplaceAllString(name, "-")
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

var invalidNameChars = regexp.MustCompile(`[^-a-z0-9.]`)

// slugMu guards the package settings of gosimple/slug, which slugify sets
// for each call, as Argo CD's SlugifyName does.
var slugMu sync.Mutex

// slugify is Argo CD's: slugify [maxLength [smartTruncate]] name (default
// 50 and true) makes a URL-safe slug of name, normalized first, with
// gosimple/slug (the library Argo CD uses). Arguments of the wrong type are
// an error naming them, where Argo CD's controller panics.
func slugify(args ...any) (string, error) {
	maxLength, smart := 50, true
	if len(args) == 0 || len(args) > 3 {
		return "", fmt.Errorf("slugify takes [maxLength [smartTruncate]] name, got %d arguments", len(args))
	}
	name, ok := args[len(args)-1].(string)
	if !ok {
		return "", fmt.Errorf("slugify: the name must be a string, got %T", args[len(args)-1])
	}
	if len(args) > 1 {
		if maxLength, ok = args[0].(int); !ok {
			return "", fmt.Errorf("slugify: maxLength must be an integer, got %T", args[0])
		}
	}
	if len(args) > 2 {
		if smart, ok = args[1].(bool); !ok {
			return "", fmt.Errorf("slugify: smartTruncate must be a boolean, got %T", args[1])
		}
	}
	slugMu.Lock()
	defer slugMu.Unlock()
	slug.MaxLength, slug.EnableSmartTruncate = maxLength, smart
	return slug.Make(SanitizeName(name)), nil
}

func toYAML(v any) (string, error) {
	out, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(out), "\n"), nil
}

func fromYAML(s string) (map[string]any, error) {
	var m map[string]any
	err := yaml.Unmarshal([]byte(s), &m)
	return m, err
}

func fromYAMLArray(s string) ([]any, error) {
	var a []any
	err := yaml.Unmarshal([]byte(s), &a)
	return a, err
}
