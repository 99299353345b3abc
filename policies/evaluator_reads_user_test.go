package policies

import (
	"os"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestUserReads(t *testing.T) {
	for _, tc := range []struct {
		name, rego string
		// want is the reads of the rules, or "" when the analysis gives up.
		want string
	}{{
		name: "fields under input",
		rego: `deny contains msg if {
	input.kind == "Pod"
	msg := sprintf("%s is a pod", [input.metadata.name])
}`,
		want: "{kind:* metadata:{name:*}}",
	}, {
		name: "through a helper rule and a function",
		rego: `pod_spec := input.spec.template.spec if input.kind == "Deployment"

untagged(image) if not contains(image, ":")

deny contains c.name if {
	some c in pod_spec.containers
	untagged(c.image)
}`,
		want: "{kind:* spec:{template:{spec:{containers:{[*]:{image:* name:*}}}}}}",
	}, {
		name: "a complete rule's value is its result",
		rego: `warn := input.metadata.labels if input.kind == "Pod"`,
		want: "{kind:* metadata:{labels:*}}",
	}, {
		name: "bare input gives up",
		rego: `deny contains "x" if walk(input, [_, "secret"])`,
	}, {
		name: "input bound to a variable gives up",
		rego: `deny contains "x" if {
	obj := input
	obj.kind == "Secret"
}`,
	}, {
		name: "with gives up",
		rego: `deny contains "x" if {
	input.kind == "Pod" with input as {"kind": "Pod"}
}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			lib := fstest.MapFS{"p.rego": {Data: []byte("package main\n\n" + tc.rego + "\n")}}
			compiler := compileFS(t, lib)
			rules, err := selectUserRules(discoverUserRules(compiler), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := userReads(compiler, rules)
			switch {
			case tc.want == "" && r != nil:
				t.Fatalf("userReads() = %v, want it to give up", r)
			case tc.want != "" && r == nil:
				t.Fatalf("userReads() gave up, want %s", tc.want)
			case r != nil && r.String() != tc.want:
				t.Errorf("userReads() = %s, want %s", r, tc.want)
			}
		})
	}
}

// TestUserReadsMatchWhole judges objects with user policies on the object
// pruned to what the rules read and on the whole object: the decisions
// must not differ.
func TestUserReadsMatchWhole(t *testing.T) {
	bench, err := os.ReadFile("../test/bench/conftest/policy.rego")
	if err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string]map[string]string{
		"user policies":   userPolicies,
		"make bench's":    {"policy.rego": string(bench)},
		"messages of all": {"p.rego": "package main\n\ndeny contains sprintf(\"%v\", [input.metadata]) if input.spec\n"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Builtin, opts.PolicyDirs = false, []string{writePolicies(t, files)}
			e, err := New(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if e.userReads == nil || e.userReads.whole {
				t.Fatalf("the rules are not pruned (%v): the test compares nothing", e.userReads)
			}
			whole := *e
			whole.userReads = nil
			objects := kindObjects(t)
			for _, kind := range []string{"Pod", "Deployment", "CronJob", "Secret"} {
				for _, o := range kindObjects(t) {
					o["kind"] = kind
					objects = append(objects, o)
				}
			}
			for _, obj := range objects {
				in := Input{Object: obj, Context: Context{EnforcementPoint: PointCLI}}
				got, err := e.Evaluate(t.Context(), in)
				if err != nil {
					t.Fatal(err)
				}
				want, err := whole.Evaluate(t.Context(), in)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("decision on %v differs (-whole +pruned):\n%s", obj, diff)
				}
			}
		})
	}
}
