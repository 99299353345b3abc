package policies

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// String renders r compactly: * for whole, {} for a value kept with its
// type only, [*] for the reads under every key.
func (r *reads) String() string {
	if r.whole {
		return "*"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.keys)) {
		parts = append(parts, k+":"+r.keys[k].String())
	}
	if r.any != nil {
		parts = append(parts, "[*]:"+r.any.String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func TestReadsOf(t *testing.T) {
	for _, tc := range []struct {
		name, rego string
		// extra is another module, package other.
		extra string
		// kind is the object's kind, "" for any.
		kind string
		// want is the reads of package p, or "" when the analysis gives up.
		want string
	}{{
		name: "a compared field",
		rego: `violation contains "x" if input.object.kind == "Pod"`,
		want: "{kind:*}",
	}, {
		name: "a bound field is read for its existence",
		rego: `violation contains "x" if x := input.object.spec.a`,
		want: "{spec:{a:{}}}",
	}, {
		name: "through a local variable",
		rego: `violation contains "x" if {
	spec := input.object.spec
	spec.replicas > 3
}`,
		want: "{spec:{replicas:*}}",
	}, {
		name: "iteration keeps every key and element",
		rego: `violation contains c.image if {
	some c in input.object.spec.containers
	is_object(c)
}`,
		want: "{spec:{containers:{[*]:{image:*}}}}",
	}, {
		name: "object.get with a constant key or path",
		rego: `violation contains msg if {
	img := object.get(input.object, ["spec", "image"], null)
	msg := sprintf("%v", [img])
}`,
		want: "{spec:{image:*}}",
	}, {
		name: "object.get with a computed key reads the object",
		rego: `violation contains "x" if {
	some k in ["a", "b"]
	object.get(input.object.spec, k, null) == 1
}`,
		want: "{spec:*}",
	}, {
		name: "a function reads what its body reads of its argument",
		rego: `name_of(obj) := n if {
	n := obj.metadata.name
	is_string(n)
} else := ""

violation contains name_of(input.object) if true`,
		want: "{metadata:{name:*}}",
	}, {
		name: "a constant argument names the key",
		rego: `list(obj, field) := obj.spec[field]

violation contains x if {
	some x in list(input.object, "destinations")
}`,
		want: "{spec:{destinations:{[*]:*}}}",
	}, {
		name: "a call without an output tests its value",
		rego: `flag(obj) := obj.spec.enabled

violation contains "x" if flag(input.object)`,
		want: "{spec:{enabled:*}}",
	}, {
		name: "a rule's value is followed where it is used",
		rego: `pod := input.object.spec.template.spec if input.object.kind == "Deployment"

violation contains c.image if {
	some c in pod.containers
}`,
		want: "{kind:* spec:{template:{spec:{containers:{[*]:{image:*}}}}}}",
	}, {
		name: "the bodies that require another kind are left out",
		rego: `spec := input.object.spec if input.object.kind == "Pod"

spec := input.object.spec.template.spec if input.object.kind in {"Deployment", "Job"}

violation contains spec.image if true`,
		kind: "Deployment",
		want: "{kind:* spec:{template:{spec:{image:*}}}}",
	}, {
		name: "every body for an unknown kind",
		rego: `spec := input.object.spec if input.object.kind == "Pod"

spec := input.object.spec.template.spec if input.object.kind in {"Deployment", "Job"}

violation contains spec.image if true`,
		want: "{kind:* spec:{image:* template:{spec:{image:*}}}}",
	}, {
		name: "comparing the object with the Application",
		rego: `violation contains input.object.kind if input.object != input.application`,
		want: "{kind:*}",
	}, {
		name: "comparing the object with anything else reads it",
		rego: `violation contains "x" if input.object != {}`,
		want: "*",
	}, {
		name: "a comprehension",
		rego: `violation contains "x" if {
	names := {c.name | some c in input.object.spec.containers}
	count(names) > 1
}`,
		want: "{spec:{containers:{[*]:{name:*}}}}",
	}, {
		name: "a computed key under input gives up",
		rego: `violation contains "x" if {
	some k in ["object"]
	input[k].kind == "Pod"
}`,
	}, {
		name: "with gives up",
		rego: `violation contains "x" if {
	input.object.kind == "Pod" with input.object.kind as "Pod"
}`,
	}, {
		name:  "a package as a value gives up",
		rego:  `violation contains "x" if count(data.other) > count(input.object.a)`,
		extra: "a := 1",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			lib := fstest.MapFS{"p.rego": {Data: []byte("package tollgate.builtin.p\n\n" + tc.rego + "\n")}}
			if tc.extra != "" {
				lib["other.rego"] = &fstest.MapFile{Data: []byte("package other\n\n" + tc.extra + "\n")}
			}
			r, err := readsOf(compileFS(t, lib), []string{"p"}, tc.kind)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("readsOf() = %v, want it to give up", r)
				}
				return
			}
			if err != nil {
				t.Fatalf("readsOf() error = %v", err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("readsOf() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestConvertRead(t *testing.T) {
	obj := jsonDecode(t, `{"kind": "Deployment", "metadata": {"name": "web", "labels": {"a": "b"}},
		"spec": {"replicas": 3, "containers": [{"name": "app", "image": "nginx:1", "env": [{"name": "A"}]}, "odd"]}}`).(map[string]any)
	r := &reads{}
	r.child("kind", false).whole = true
	r.at(path{{key: "spec"}, {key: "containers"}, {wildcard: true}, {key: "image"}}).whole = true
	r.at(path{{key: "metadata"}})
	r.finish()
	got, err := convertRead(obj, r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := convert(jsonDecode(t, `{"kind": "Deployment", "metadata": {},
		"spec": {"containers": [{"image": "nginx:1"}, "odd"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Compare(want) != 0 {
		t.Errorf("convertRead() = %v, want %v", got, want)
	}
}

func TestPrunable(t *testing.T) {
	r := &reads{}
	r.child("kind", false).whole = true
	app := map[string]any{"kind": "Application", "spec": map[string]any{"replicas": int64(3)}}
	for _, tc := range []struct {
		name string
		in   Input
		r    *reads
		want bool
	}{
		{"no Application", Input{Object: map[string]any{"kind": "Pod"}}, r, true},
		{"another object", Input{Object: map[string]any{"kind": "Pod"}, Application: app}, r, true},
		{"the Application itself", Input{Object: app, Application: app}, r, false},
		{"an equal copy", Input{Object: map[string]any{"kind": "Application", "spec": map[string]any{"replicas": int64(3)}}, Application: app}, r, false},
		{"a copy with 3.0 for 3", Input{Object: map[string]any{"kind": "Application", "spec": map[string]any{"replicas": 3.0}}, Application: app}, r, false},
		{"no object", Input{Application: app}, r, false},
		{"whole reads", Input{Object: map[string]any{"kind": "Pod"}}, &reads{whole: true}, false},
		{"no reads", Input{Object: map[string]any{"kind": "Pod"}}, nil, false},
	} {
		if got := prunable(tc.in, tc.r); got != tc.want {
			t.Errorf("%s: prunable() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBuiltinLibraryPrunes keeps the built-in library analysable: a rule
// that made the analysis give up, or read objects whole, would make every
// review convert the whole object again.
func TestBuiltinLibraryPrunes(t *testing.T) {
	e, err := New(t.Context(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string]*kindQuery{"(other kinds)": e.builtin.other}
	maps.Copy(queries, e.builtin.byKind)
	for kind, q := range queries {
		if q.reads == nil || q.reads.whole {
			t.Errorf("%s: the object is converted whole (reads %v)", kind, q.reads)
		}
	}
	const want = "{apiVersion:* kind:* metadata:{generateName:* name:* namespace:*} spec:{replicas:* template:{spec:{[*]:{[*]:{image:* name:*}}}}}}"
	if got := e.builtin.byKind["Deployment"].reads.String(); got != want {
		t.Errorf("a Deployment's reads = %s, want %s", got, want)
	}
}
