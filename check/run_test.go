package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChunkEnd(t *testing.T) {
	// Files a (3 documents), b (2), c (1).
	entries := []entry{{file: "a"}, {file: "a"}, {file: "a"}, {file: "b"}, {file: "b"}, {file: "c"}}
	tests := []struct {
		name        string
		start, size int
		want        int
	}{
		{"chunk ends inside a file and is extended to its end", 0, 2, 3},
		{"chunk ends at a file boundary", 0, 3, 3},
		{"next chunk extended", 3, 1, 5},
		{"last file", 5, 4, 6},
		{"size past the end", 0, 100, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chunkEnd(entries, tt.start, tt.size); got != tt.want {
				t.Errorf("chunkEnd(%d, %d) = %d, want %d", tt.start, tt.size, got, tt.want)
			}
		})
	}
}

// TestRunAcrossChunks checks more documents than one evaluation chunk
// holds: every document gets its own result, in file order, with the
// violations of its own decision.
func TestRunAcrossChunks(t *testing.T) {
	dir := t.TempDir()
	const files, docs = 3*evalChunk/10 + 7, 10
	writeBenchRepo(t, dir, files, docs)
	rep, _, err := Run(t.Context(), Options{Paths: []string{dir}, RepoRoot: dir, RepoURL: "https://example.com/bench"})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Documents, Denied, Results, Files int
	}
	want := got{Documents: files * docs, Denied: files, Results: files * docs, Files: files}
	if diff := cmp.Diff(want, got{rep.Summary.Documents, rep.Summary.Denied, len(rep.Results), rep.Summary.Files}); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if !slices.IsSortedFunc(rep.Results, compareResults) {
		t.Error("results are not in file and document order")
	}
	for _, r := range rep.Results {
		denied := false
		for _, v := range r.Violations {
			denied = denied || v.Rule == "no-latest-tag"
		}
		// writeBenchRepo gives document 4 of every file a latest tag.
		if wantDenied := r.Document == 4; denied != wantDenied {
			t.Errorf("%s document %d: no-latest-tag reported %v, want %v", r.File, r.Document, denied, wantDenied)
		}
		if r.Name != fmt.Sprintf("app-%s-%d", fileNumber(r.File), r.Document) {
			t.Errorf("%s document %d: result names %s", r.File, r.Document, r.Name)
		}
	}
}

// fileNumber returns N of a path ending in fileN.yaml.
func fileNumber(p string) string {
	_, base, _ := strings.Cut(p[strings.LastIndex(p, "/")+1:], "file")
	return strings.TrimSuffix(base, ".yaml")
}
