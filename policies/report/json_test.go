package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The contract shape, declared here independently of json.go.
type contractReport struct {
	Results []contractResult `json:"results"`
	Summary struct {
		Files     int `json:"files"`
		Documents int `json:"documents"`
		Denied    int `json:"denied"`
		Warned    int `json:"warned"`
	} `json:"summary"`
}

type contractResult struct {
	File        string              `json:"file"`
	Document    int                 `json:"document"`
	Kind        string              `json:"kind"`
	Name        string              `json:"name"`
	Namespace   string              `json:"namespace"`
	Application string              `json:"application"`
	Violations  []contractViolation `json:"violations"`
}

type contractViolation struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func writeJSON(t *testing.T, r Report) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := Write(&out, FormatJSON, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return out.Bytes()
}

func TestJSONContractShape(t *testing.T) {
	tests := []struct {
		name   string
		report Report
	}{
		{"fail", failingReport()},
		{"pass", passingReport()},
		{"empty", Report{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := writeJSON(t, tt.report)

			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			var got contractReport
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("decode into the contract shape: %v\n%s", err, data)
			}

			want := contractReport{Results: []contractResult{}}
			want.Summary.Files = tt.report.Summary.Files
			want.Summary.Documents = tt.report.Summary.Documents
			want.Summary.Denied = tt.report.Summary.Denied
			want.Summary.Warned = tt.report.Summary.Warned
			for _, res := range tt.report.Results {
				cr := contractResult{
					File: res.File, Document: res.Document, Kind: res.Kind, Name: res.Name,
					Namespace: res.Namespace, Application: res.Application,
					Violations: []contractViolation{},
				}
				for _, f := range res.Violations {
					cr.Violations = append(cr.Violations, contractViolation{f.Rule, string(f.Severity), f.Message})
				}
				want.Results = append(want.Results, cr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decoded report mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJSONKeyOrder(t *testing.T) {
	want := map[string][]string{
		"":                        {"results", "summary"},
		".results[]":              {"file", "document", "kind", "name", "namespace", "application", "violations"},
		".results[].violations[]": {"rule", "severity", "message"},
		".summary":                {"files", "documents", "denied", "warned"},
	}
	data := writeJSON(t, failingReport())
	got, err := keyOrders(data)
	if err != nil {
		t.Fatalf("walk json: %v", err)
	}
	// Every object at a path must have exactly the contract's keys in order.
	paths := make(map[string][]string)
	for path, orders := range got {
		for i, keys := range orders {
			if diff := cmp.Diff(want[path], keys); diff != "" {
				t.Errorf("keys of object %d at %q mismatch (-want +got):\n%s", i, path, diff)
			}
		}
		paths[path] = want[path]
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("object paths mismatch (-want +got):\n%s", diff)
	}
}

func TestJSONNullFreeArrays(t *testing.T) {
	for name, r := range map[string]Report{"empty": {}, "pass": passingReport()} {
		t.Run(name, func(t *testing.T) {
			data := writeJSON(t, r)
			if bytes.Contains(data, []byte("null")) {
				t.Errorf("json output contains null:\n%s", data)
			}
		})
	}
}

func TestJSONLayout(t *testing.T) {
	data := string(writeJSON(t, Report{}))
	want := "{\n  \"results\": [],\n  \"summary\": {\n    \"files\": 0,\n    \"documents\": 0,\n    \"denied\": 0,\n    \"warned\": 0\n  }\n}\n"
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("empty json report mismatch (-want +got):\n%s", diff)
	}
	fail := string(writeJSON(t, failingReport()))
	if !strings.Contains(fail, `host <*.shop.example> & \"tls\" must match; got 'none' \\ see runbook`) {
		t.Errorf("json output does not keep <, > and & readable and escape \" and \\:\n%s", fail)
	}
}

// keyOrders walks a JSON document and returns, for each object path (""
// for the root, ".a[]" for the elements of array a), the key order of every
// object found there.
func keyOrders(data []byte) (map[string][][]string, error) {
	out := make(map[string][][]string)
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := walkJSON(dec, "", out); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the document")
	}
	return out, nil
}

func walkJSON(dec *json.Decoder, path string, out map[string][][]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	switch delim {
	case '{':
		var keys []string
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			keys = append(keys, key)
			if err := walkJSON(dec, path+"."+key, out); err != nil {
				return err
			}
		}
		out[path] = append(out[path], keys)
	case '[':
		for dec.More() {
			if err := walkJSON(dec, path+"[]", out); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}
