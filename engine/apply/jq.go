package apply

import (
	"reflect"

	"github.com/itchyny/gojq"
)

// maxJQPaths bounds the paths one jq evaluation may yield: ".. | .. | .."
// enumerates the object's values to the power of its recursions, each a
// path kept in memory until the second of jqTimeout ends it.
const maxJQPaths = 10_000

// refusedJQFuncs are the jq builtins whose output a path expression of an
// Application can grow without bound, in the controller's memory, before
// jqTimeout ends it: the generators that need no input (range, repeat,
// recurse with a function, until, while) and the product of arrays
// (combinations). Function definitions, reduce, foreach and the *
// operator ("a" * 2000000000; a string doubled at each step of a
// reduce) are refused with them. jq's time limit cannot interrupt one
// allocation. What a path expression selects never needs them.
var refusedJQFuncs = map[string]bool{"range": true, "repeat": true, "until": true, "while": true, "combinations": true}

// jqRefused returns what of q an ignoreDifferences jq path expression may
// not use (refusedJQFuncs), "" when it uses none of it.
func jqRefused(q *gojq.Query) string {
	return refusedIn(reflect.ValueOf(q))
}

// refusedIn walks the parsed query's nodes.
func refusedIn(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		switch n := v.Interface().(type) {
		case *gojq.Query:
			if len(n.FuncDefs) > 0 {
				return "def"
			}
			if n.Op == gojq.OpMul {
				return "the * operator"
			}
		case *gojq.Func:
			if refusedJQFuncs[n.Name] || n.Name == "recurse" && len(n.Args) > 0 {
				return n.Name
			}
		case *gojq.Reduce:
			return "reduce"
		case *gojq.Foreach:
			return "foreach"
		}
		return refusedIn(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if r := refusedIn(v.Field(i)); r != "" {
				return r
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if r := refusedIn(v.Index(i)); r != "" {
				return r
			}
		}
	}
	return ""
}
