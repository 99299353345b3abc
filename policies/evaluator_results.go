package policies

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/open-policy-agent/opa/v1/rego"
)

// appendBuiltinResults turns the built-in query's results into violations
// with their rules' default severities.
func appendBuiltinResults(vs []Violation, rs rego.ResultSet) ([]Violation, error) {
	for _, r := range rs {
		pkg, _ := r.Bindings["pkg"].(string)
		where := "built-in policy tollgate.builtin." + pkg
		obj, ok := r.Bindings["v"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: violation is %s, want an object with rule and msg", where, jsonType(r.Bindings["v"]))
		}
		id, ok := obj["rule"].(string)
		if !ok || id == "" {
			return nil, fmt.Errorf("%s: violation has no string rule", where)
		}
		v, err := resultViolation(obj, id, defaultSeverity(id))
		if err != nil {
			return nil, fmt.Errorf("%s: rule %s: %w", where, id, err)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// appendUserResults turns the combined user query's result into violations,
// following conftest: a string is a message; an object carries msg and
// optionally rule (or id) and path; booleans and undefined rules pass.
func appendUserResults(vs []Violation, rs rego.ResultSet, rules []userRule) ([]Violation, error) {
	if len(rs) != 1 {
		return nil, fmt.Errorf("user policy query returned %d results, want 1", len(rs))
	}
	out, ok := rs[0].Bindings["out"].([]any)
	if !ok || len(out) != len(rules) {
		return nil, fmt.Errorf("user policy query returned %s, want %d rule values", jsonType(rs[0].Bindings["out"]), len(rules))
	}
	for i, r := range rules {
		vals, _ := out[i].([]any)
		if len(vals) == 0 {
			continue
		}
		var err error
		switch val := vals[0].(type) {
		case []any:
			for _, elem := range val {
				if vs, err = appendUserResult(vs, r, elem); err != nil {
					return nil, err
				}
			}
		case string, map[string]any:
			if vs, err = appendUserResult(vs, r, val); err != nil {
				return nil, err
			}
		}
	}
	return vs, nil
}

// appendUserResult adds the violation for one result of a user rule.
func appendUserResult(vs []Violation, r userRule, result any) ([]Violation, error) {
	switch res := result.(type) {
	case string:
		return append(vs, Violation{Rule: r.pkg, Severity: r.severity, Message: res}), nil
	case map[string]any:
		id := r.pkg
		if s, ok := res["rule"].(string); ok && s != "" {
			id = s
		} else if s, ok := res["id"].(string); ok && s != "" {
			id = s
		}
		v, err := resultViolation(res, id, r.severity)
		if err != nil {
			return nil, fmt.Errorf("policy %s.%s: %w", r.pkg, r.name, err)
		}
		return append(vs, v), nil
	default:
		return nil, fmt.Errorf("policy %s.%s: result is %s, want a string or an object with msg", r.pkg, r.name, jsonType(result))
	}
}

// resultViolation builds a violation from a result object with msg and an
// optional path.
func resultViolation(obj map[string]any, id string, sev Severity) (Violation, error) {
	msg, ok := obj["msg"].(string)
	if !ok {
		return Violation{}, fmt.Errorf("result has no string msg")
	}
	path, err := toPath(obj["path"])
	if err != nil {
		return Violation{}, err
	}
	return Violation{Rule: id, Severity: sev, Message: msg, Path: path}, nil
}

// toPath converts a result's path to string keys and int indexes.
func toPath(v any) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("path is %s, want an array", jsonType(v))
	}
	if len(arr) == 0 {
		return nil, nil
	}
	out := make([]any, len(arr))
	for i, e := range arr {
		switch e := e.(type) {
		case string:
			out[i] = e
		case json.Number:
			n, err := e.Int64()
			if err != nil || n < 0 {
				return nil, fmt.Errorf("path[%d]: %s is not an index", i, e)
			}
			out[i] = int(n)
		case float64:
			if e != math.Trunc(e) || e < 0 {
				return nil, fmt.Errorf("path[%d]: %v is not an index", i, e)
			}
			out[i] = int(e)
		default:
			return nil, fmt.Errorf("path[%d] is %s, want a string or an index", i, jsonType(e))
		}
	}
	return out, nil
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// defaultSeverity is the default severity of a rule id: the built-in
// table's, else deny.
func defaultSeverity(id string) Severity {
	if r, ok := builtinRule(id); ok {
		return r.Severity
	}
	return SeverityDeny
}

// objectRef identifies obj for violations.
func objectRef(obj map[string]any) ObjectRef {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return ObjectRef{
		APIVersion: apiVersion,
		Kind:       kind,
		Namespace:  objectNamespace(obj),
		Name:       objectName(obj),
	}
}
