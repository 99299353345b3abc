package report

import (
	"net/url"
	"path/filepath"
	"slices"

	"github.com/tollgate-dev/tollgate/policies"
)

// The sarif format is a SARIF 2.1.0 log for code scanning (GitHub's
// upload-sarif, GitLab, IDE viewers): one run whose tool.driver is tollgate,
// with one rule per rule id that appears in the results (sorted by id), and
// one result per violation, in result order. Passing documents produce no
// SARIF result; an empty "results" array means the run found nothing.
//
// A rule's shortDescription comes from Report.RuleDescriptions, falling back
// to the rule id (GitHub code scanning expects every rule to have one and
// shows it as the alert's title); its helpUri is the rule's section of the policy
// reference (docs/policies.md); its defaultConfiguration.level is "error" when any of its
// violations is a deny, else "warning". A result's level is "error" for deny
// and "warning" for warn; its message is "Kind/name: message", with
// " (app name)" for rendered objects; its location is the file relative to
// %SRCROOT% (forward slashes, percent-encoded as a URI reference), with a
// region only when the line is known.
//
// Results that could not be checked (a file that does not decode, a
// directory or an Application that does not render) are not findings: the
// run then has one invocation with executionSuccessful false and one
// toolExecutionNotification per result (level "error", the message and the
// location as above), which code scanning reports as a failed analysis
// rather than as an alert. Without them the run has no "invocations".

const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	toolName     = "tollgate"
	toolURI      = "https://github.com/tollgate-dev/tollgate"
	// rulesURI is the policy reference; a rule id is its section's anchor.
	rulesURI = toolURI + "/blob/main/docs/policies.md"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations,omitempty"`
	Results     []sarifResult     `json:"results"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	ShortDescription     sarifMessage       `json:"shortDescription"`
	HelpURI              string             `json:"helpUri"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// renderSARIF renders the sarif format described above.
func renderSARIF(r Report) ([]byte, error) {
	// Collect rule ids and whether any of their violations denies.
	denies := make(map[string]bool)
	for _, res := range r.Results {
		for _, f := range res.Violations {
			denies[f.Rule] = denies[f.Rule] || f.Severity == policies.SeverityDeny
		}
	}
	ids := make([]string, 0, len(denies))
	for id := range denies {
		ids = append(ids, id)
	}
	slices.Sort(ids)

	rules := make([]sarifRule, 0, len(ids))
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
		rule := sarifRule{
			ID:                   id,
			HelpURI:              rulesURI + "#" + (&url.URL{Fragment: id}).EscapedFragment(),
			DefaultConfiguration: sarifConfiguration{Level: "warning"},
		}
		if denies[id] {
			rule.DefaultConfiguration.Level = "error"
		}
		desc := r.RuleDescriptions[id]
		if desc == "" {
			desc = id
		}
		rule.ShortDescription = sarifMessage{Text: desc}
		rules = append(rules, rule)
	}

	results := make([]sarifResult, 0)
	var notes []sarifNotification
	for _, res := range r.Results {
		if res.Error != "" {
			text := res.Error
			if subject := res.subject(); subject != "" {
				text = subject + ": " + text
			}
			notes = append(notes, sarifNotification{
				Level:     "error",
				Message:   sarifMessage{Text: withApplication(text, res.Application)},
				Locations: []sarifLocation{{PhysicalLocation: sarifLocationOf(res.File, res.Line)}},
			})
		}
		for _, f := range res.Violations {
			results = append(results, sarifResultOf(res, f, index[f.Rule]))
		}
	}
	var invocations []sarifInvocation
	if len(notes) > 0 {
		invocations = []sarifInvocation{{ToolExecutionNotifications: notes}}
	}

	return encodeJSON(sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs: []sarifRun{{
			Tool: sarifTool{Driver: sarifDriver{
				Name:           toolName,
				InformationURI: toolURI,
				Version:        r.ToolVersion,
				Rules:          rules,
			}},
			Invocations: invocations,
			Results:     results,
		}},
	})
}

// sarifResultOf converts one violation; ruleIndex is its rule's index in the
// driver's rules.
func sarifResultOf(res Result, f Finding, ruleIndex int) sarifResult {
	level := "warning"
	if f.Severity == policies.SeverityDeny {
		level = "error"
	}
	return sarifResult{
		RuleID:    f.Rule,
		RuleIndex: ruleIndex,
		Level:     level,
		Message:   sarifMessage{Text: withApplication(res.object()+": "+f.Message, res.Application)},
		Locations: []sarifLocation{{PhysicalLocation: sarifLocationOf(res.File, res.line(f))}},
	}
}

// sarifLocationOf is the physical location of file, with a region when
// line is known.
func sarifLocationOf(file string, line int) sarifPhysicalLocation {
	loc := sarifPhysicalLocation{
		ArtifactLocation: sarifArtifactLocation{URI: artifactURI(file), URIBaseID: "%SRCROOT%"},
	}
	if line > 0 {
		loc.Region = &sarifRegion{StartLine: line}
	}
	return loc
}

// artifactURI turns a repo-relative file path into a relative URI reference:
// forward slashes, reserved characters and spaces percent-encoded, and "./"
// in front when the first segment holds a colon (so it is not read as a
// scheme).
func artifactURI(file string) string {
	return (&url.URL{Path: filepath.ToSlash(file)}).String()
}
