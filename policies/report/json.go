package report

import (
	"bytes"
	"encoding/json"
)

// The json format is a contract for scripts. Its shape, with keys in exactly
// this order, is
//
//	{"results":[{"file","document","kind","name","namespace","application",
//	             "violations":[{"rule","severity","message"}],"error"}],
//	 "summary":{"files","documents","denied","warned","errors"}}
//
// indented by two spaces and ending in a newline. "results" and every
// "violations" are arrays, never null; string fields are always present
// (empty when unknown) except "error", which a result has only when what
// its file holds could not be checked (a file that does not decode, a
// directory or an Application that does not render; its "violations" is
// then empty), and "errors", present only when it is not 0; "document"
// is 0-based; "severity" is "deny" or "warn". Characters such as <, > and
// & are written as themselves.

type jsonReport struct {
	Results []jsonResult `json:"results"`
	Summary jsonSummary  `json:"summary"`
}

type jsonResult struct {
	File        string          `json:"file"`
	Document    int             `json:"document"`
	Kind        string          `json:"kind"`
	Name        string          `json:"name"`
	Namespace   string          `json:"namespace"`
	Application string          `json:"application"`
	Violations  []jsonViolation `json:"violations"`
	Error       string          `json:"error,omitempty"`
}

type jsonViolation struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

type jsonSummary struct {
	Files     int `json:"files"`
	Documents int `json:"documents"`
	Denied    int `json:"denied"`
	Warned    int `json:"warned"`
	Errors    int `json:"errors,omitempty"`
}

// renderJSON renders the json format described above.
func renderJSON(r Report) ([]byte, error) {
	out := jsonReport{
		Results: make([]jsonResult, 0, len(r.Results)),
		Summary: jsonSummary{
			Files:     r.Summary.Files,
			Documents: r.Summary.Documents,
			Denied:    r.Summary.Denied,
			Warned:    r.Summary.Warned,
			Errors:    r.Summary.Errors,
		},
	}
	for _, res := range r.Results {
		jr := jsonResult{
			File:        res.File,
			Document:    res.Document,
			Kind:        res.Kind,
			Name:        res.Name,
			Namespace:   res.Namespace,
			Application: res.Application,
			Violations:  make([]jsonViolation, 0, len(res.Violations)),
			Error:       res.Error,
		}
		for _, f := range res.Violations {
			jr.Violations = append(jr.Violations, jsonViolation{
				Rule:     f.Rule,
				Severity: string(f.Severity),
				Message:  f.Message,
			})
		}
		out.Results = append(out.Results, jr)
	}
	return encodeJSON(out)
}

// encodeJSON encodes v indented by two spaces, with a trailing newline and
// without HTML escaping. The sarif writer uses it too.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
