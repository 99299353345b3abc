package check

import (
	"context"
	"fmt"
	"path"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/engine/render"
)

// maxAppDepth bounds how deep Applications rendered by Applications (app of
// apps) are followed.
const maxAppDepth = 16

// claims records what Applications rendered from the repository root, so
// the walked copies of the same files are not checked a second time
// without the Application's context.
type claims struct {
	// docs holds "file\x00index\x00line" of documents an Application read
	// from a plain directory.
	docs map[string]bool
	// dirs holds the repo-relative directories an Application rendered with
	// kustomize or Helm.
	dirs map[string]bool
}

func docKey(d render.Document) string {
	return fmt.Sprintf("%s\x00%d\x00%d", d.File, d.Index, d.Line)
}

// claimsUnit reports whether an Application rendered the walked directory
// unit u from the repository root.
func (c claims) claimsUnit(root repoRoot, u unit) bool {
	return u.kind != unitFile && (u.root == root.given || u.root == root.real) && c.dirs[u.rel]
}

// claimsEntry reports whether an Application read the walked document e
// from the repository root.
func (c claims) claimsEntry(root repoRoot, e entry) bool {
	return (e.root == root.given || e.root == root.real) && c.docs[docKey(e.doc)]
}

// appJob is one source of one Application to render.
type appJob struct {
	app    entry
	name   string
	source appSource
}

// where names an Application document in messages: "file:line: Application "name"".
func (j appJob) where() string {
	return fmt.Sprintf("%s: Application %q", location(j.app.file, j.app.doc.Line), j.name)
}

// location formats file:line, or file when the line is unknown.
func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// renderApplications renders, from the checkout at root, the sources of
// the Applications among found whose repository is repoURL (normalized;
// "" renders nothing), and then of the Applications those render, level by
// level. Each Application is rendered once. It returns the rendered
// documents with their Application, what the renders claimed, and notes
// about sources that were not rendered. Renders of one level run
// concurrently. An Application that cannot be decoded, or that the engine
// would refuse (planApplication), is an error naming its file and line,
// as a failed render is.
func renderApplications(ctx context.Context, root repoRoot, repoURL string, found []entry, build buildFunc, lim render.Limits) ([]entry, claims, []Note, error) {
	c := claims{docs: map[string]bool{}, dirs: map[string]bool{}}
	var out []entry
	var notes []Note
	seen := map[string]bool{}
	pending := applications(found)
	for depth := 0; len(pending) > 0; depth++ {
		if depth == maxAppDepth {
			notes = append(notes, Note{File: pending[0].file, Line: pending[0].doc.Line,
				Message: fmt.Sprintf("Applications rendered by Applications more than %d levels deep are not rendered", maxAppDepth)})
			break
		}
		var jobs []appJob
		for _, a := range pending {
			name, _ := nestedString(a.doc.Object, "metadata", "name")
			ns, _ := nestedString(a.doc.Object, "metadata", "namespace")
			key := docKey(a.doc) + "\x00" + ns + "/" + name
			if seen[key] {
				continue
			}
			seen[key] = true
			plan, err := planApplication(a.doc.Object, repoURL, root.given)
			job := appJob{app: a, name: name}
			if err != nil {
				return nil, c, nil, fmt.Errorf("%s: %w", job.where(), err)
			}
			if repoURL != "" {
				for _, msg := range plan.Skipped {
					notes = append(notes, Note{File: a.file, Line: a.doc.Line, Message: fmt.Sprintf("Application %q %s", name, msg)})
				}
			}
			for _, s := range plan.Sources {
				job.source = s
				jobs = append(jobs, job)
			}
		}
		results := make([]render.Result, len(jobs))
		err := forEach(ctx, len(jobs), func(ctx context.Context, i int) error {
			j := jobs[i]
			res, err := build(ctx, root.given, j.source.Path, j.source.Options, lim)
			if err != nil {
				return fmt.Errorf("%s %s: %w", j.where(), j.source.Field, err)
			}
			results[i] = res
			return nil
		})
		if err != nil {
			return nil, c, nil, err
		}
		pending = nil
		for i, res := range results {
			j := jobs[i]
			if res.Kind == render.KindDirectory {
				for _, d := range res.Documents {
					c.docs[docKey(d)] = true
				}
			} else {
				c.dirs[cleanRel(j.source.Path)] = true
			}
			for _, d := range res.Documents {
				e := entry{doc: withoutSyntax(d), root: root.given, file: d.File, app: j.app.doc.Object, appName: j.name}
				out = append(out, e)
				if isKind(d.Object, "argoproj.io", "Application") {
					pending = append(pending, e)
				}
			}
			for _, n := range res.Notes {
				notes = append(notes, Note{File: n.File, Line: n.Line, Message: n.Message})
			}
		}
	}
	return out, c, notes, nil
}

// applications returns the entries that are Applications.
func applications(entries []entry) []entry {
	var out []entry
	for _, e := range entries {
		if isKind(e.doc.Object, "argoproj.io", "Application") {
			out = append(out, e)
		}
	}
	return out
}

// cleanRel cleans a source path the way render does: slash-separated,
// relative to the repository root.
func cleanRel(p string) string {
	return path.Clean(filepath.ToSlash(p))
}
