package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func writeSARIF(t *testing.T, r Report) map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := Write(&out, FormatSARIF, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("sarif output is not JSON: %v\n%s", err, out.String())
	}
	return doc
}

// checkSARIFShape checks the properties SARIF 2.1.0 requires (and GitHub
// code scanning relies on) on a decoded log, without using the writer's own
// types, and returns the problems found.
func checkSARIFShape(doc map[string]any) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if doc["$schema"] != "https://json.schemastore.org/sarif-2.1.0.json" {
		fail("$schema = %v", doc["$schema"])
	}
	if doc["version"] != "2.1.0" {
		fail("version = %v, want 2.1.0", doc["version"])
	}
	runs, _ := doc["runs"].([]any)
	if len(runs) != 1 {
		return append(problems, fmt.Sprintf("runs has %d entries, want 1", len(runs)))
	}
	run, _ := runs[0].(map[string]any)
	driver, _ := dig(run, "tool", "driver").(map[string]any)
	if driver == nil {
		return append(problems, "runs[0].tool.driver missing")
	}
	if driver["name"] != "tollgate" {
		fail("driver.name = %v", driver["name"])
	}
	if driver["informationUri"] != "https://github.com/tollgate-dev/tollgate" {
		fail("driver.informationUri = %v", driver["informationUri"])
	}
	rules, ok := driver["rules"].([]any)
	if !ok {
		fail("driver.rules is not an array")
	}
	var ids []string
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		id, _ := rule["id"].(string)
		if id == "" {
			fail("rules[%d].id missing", i)
		}
		ids = append(ids, id)
		// Invalid UTF-8 in an id reaches the JSON as U+FFFD but the URI as
		// its raw bytes, percent-encoded.
		help, _ := rule["helpUri"].(string)
		if u, err := url.Parse(help); err != nil || !strings.HasPrefix(help, "https://github.com/tollgate-dev/tollgate/blob/main/docs/policies.md#") || (u.Fragment != id && utf8.ValidString(u.Fragment)) {
			fail("rules[%d].helpUri = %q, want the policy reference (docs/policies.md) with fragment %q", i, help, id)
		}
		if text, _ := dig(rule, "shortDescription", "text").(string); text == "" {
			fail("rules[%d].shortDescription.text missing", i)
		}
		if lvl := dig(rule, "defaultConfiguration", "level"); lvl != "error" && lvl != "warning" {
			fail("rules[%d].defaultConfiguration.level = %v", i, lvl)
		}
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		fail("rule ids %v are not sorted and unique", ids)
	}

	results, ok := run["results"].([]any)
	if !ok {
		return append(problems, "runs[0].results is not an array")
	}
	used := make(map[string]bool)
	for i, r := range results {
		res, _ := r.(map[string]any)
		id, _ := res["ruleId"].(string)
		used[id] = true
		idx := slices.Index(ids, id)
		if idx < 0 {
			fail("results[%d].ruleId %q not in driver.rules", i, id)
		}
		if ri, _ := res["ruleIndex"].(float64); int(ri) != idx {
			fail("results[%d].ruleIndex = %v, want %d", i, res["ruleIndex"], idx)
		}
		if lvl := res["level"]; lvl != "error" && lvl != "warning" {
			fail("results[%d].level = %v", i, lvl)
		}
		if text, _ := dig(res, "message", "text").(string); text == "" {
			fail("results[%d].message.text missing", i)
		}
		locs, _ := res["locations"].([]any)
		if len(locs) == 0 {
			fail("results[%d].locations empty", i)
		}
		for j, l := range locs {
			loc, _ := l.(map[string]any)
			uri, _ := dig(loc, "physicalLocation", "artifactLocation", "uri").(string)
			if uri == "" || strings.Contains(uri, `\`) || strings.HasPrefix(uri, "/") {
				fail("results[%d].locations[%d] uri = %q, want a relative forward-slash URI", i, j, uri)
			}
			if base := dig(loc, "physicalLocation", "artifactLocation", "uriBaseId"); base != "%SRCROOT%" {
				fail("results[%d].locations[%d] uriBaseId = %v", i, j, base)
			}
			phys, _ := dig(loc, "physicalLocation").(map[string]any)
			if region, present := phys["region"]; present {
				if line, _ := dig(region, "startLine").(float64); line < 1 {
					fail("results[%d].locations[%d] region.startLine = %v, want >= 1", i, j, line)
				}
			}
		}
	}
	for _, id := range ids {
		if !used[id] {
			fail("rule %q is declared but no result uses it", id)
		}
	}
	return problems
}

// dig follows keys through nested JSON objects, nil when one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestSARIFShape(t *testing.T) {
	for name, r := range map[string]Report{"fail": failingReport(), "pass": passingReport(), "empty": {}} {
		t.Run(name, func(t *testing.T) {
			if problems := checkSARIFShape(writeSARIF(t, r)); len(problems) > 0 {
				t.Errorf("SARIF shape problems:\n%s", strings.Join(problems, "\n"))
			}
		})
	}
}

// TestSARIFContent checks what the fixture's results become.
func TestSARIFContent(t *testing.T) {
	doc := writeSARIF(t, failingReport())
	run := doc["runs"].([]any)[0].(map[string]any)

	type rule struct{ ID, Description, Level string }
	var gotRules []rule
	for _, r := range dig(run, "tool", "driver", "rules").([]any) {
		desc, _ := dig(r, "shortDescription", "text").(string)
		gotRules = append(gotRules, rule{dig(r, "id").(string), desc, dig(r, "defaultConfiguration", "level").(string)})
	}
	wantRules := []rule{
		{"acme.ingress:tls", "acme.ingress:tls", "warning"}, // no description: the id
		{"no-latest-tag", "Images must be pinned to a tag other than latest or a digest.", "error"},
		{"no-privileged", "Containers must not run privileged.", "error"},
		{"project-not-default", `Applications must not use the "default" AppProject.`, "error"},
		{"resource-limits", "Containers should set CPU and memory limits.", "warning"},
	}
	if diff := cmp.Diff(wantRules, gotRules); diff != "" {
		t.Errorf("rules mismatch (-want +got):\n%s", diff)
	}
	if v := dig(run, "tool", "driver", "version"); v != "1.4.0-test" {
		t.Errorf("driver.version = %v, want 1.4.0-test", v)
	}

	type result struct {
		Rule, Level, Text, URI string
		Line                   float64 // 0 when there is no region
	}
	var got []result
	for _, r := range run["results"].([]any) {
		loc := dig(r, "locations").([]any)[0]
		line, _ := dig(loc, "physicalLocation", "region", "startLine").(float64)
		got = append(got, result{
			Rule:  dig(r, "ruleId").(string),
			Level: dig(r, "level").(string),
			Text:  dig(r, "message", "text").(string),
			URI:   dig(loc, "physicalLocation", "artifactLocation", "uri").(string),
			Line:  line,
		})
	}
	want := []result{
		{"no-latest-tag", "error", `Deployment/guestbook-ui: container "ui" uses image "gcr.io/heptio/ui:latest"; pin a tag or digest`, "apps/guestbook/deployment.yaml", 21},
		{"resource-limits", "warning", `Deployment/guestbook-ui: container "ui" has no memory limit`, "apps/guestbook/deployment.yaml", 1},
		{"project-not-default", "error", `Application/guestbook: spec.project is "default": use a project that restricts destinations & sources`, "apps/argocd/guestbook.yaml", 6},
		{"no-privileged", "error", "Deployment/web: container \"web\" is privileged:\nset securityContext.privileged=false (100% required)\r\n (app web-prod)", "charts/web/templates/deployment.yaml", 0},
		{"no-privileged", "error", `Deployment/web: init container "setup" is privileged (app web-prod)`, "charts/web/templates/deployment.yaml", 0},
		{"acme.ingress:tls", "warning", `Ingress/shop: host <*.shop.example> & "tls" must match; got 'none' \ see runbook`, "apps/shop/ingress,v1%20old.yaml", 47},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
}

func TestArtifactURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"apps/web/deployment.yaml", "apps/web/deployment.yaml"},
		{"apps/my app/a#b.yaml", "apps/my%20app/a%23b.yaml"},
		{"ünïcode/x.yaml", "%C3%BCn%C3%AFcode/x.yaml"},
		{"a:b/c.yaml", "./a:b/c.yaml"},
		{"100%.yaml", "100%25.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := artifactURI(tt.in); got != tt.want {
				t.Errorf("artifactURI(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
