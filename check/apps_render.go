package check

import (
	"context"
	"fmt"
	"path"
	"path/filepath"

	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/server"
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

// appJob is one Application to render.
type appJob struct {
	app  entry
	name string
}

// failure is the error result of the job's Application.
func (j appJob) failure(err error) report.Result {
	ns, _ := nestedString(j.app.doc.Object, "metadata", "namespace")
	return report.Result{
		File: j.app.file, Document: j.app.doc.Index, Line: j.app.doc.Line,
		Kind: "Application", Name: j.name, Namespace: ns, Application: j.app.appName,
		Error: err.Error(),
	}
}

// location formats file:line, or file when the line is unknown.
func location(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// renderApplications renders the sources of the Applications among found
// with svc, the repo-server service over the checkout of the repository
// under test (newAppService), and then of the Applications those render,
// level by level, Argo CD running in controlNS and caps standing in for
// the cluster's capabilities, the projects known judging remote
// Kustomize bases. Each Application is rendered once, or taken from memo
// (nil for none), which keeps the renders that succeeded. It
// returns the rendered documents with their Application, what the renders
// claimed from root, notes about sources that were not rendered (when
// notes is set: a repository is under test), and one error result per
// Application that could not be rendered: one that cannot be decoded,
// that the engine would refuse, or one of whose sources fails to render.
// Such an Application renders nothing, as Argo CD then generates no
// manifests for it; the others are unaffected. Applications of one level
// render concurrently. The error returned is ctx's.
func renderApplications(ctx context.Context, svc *server.Service, root repoRoot, controlNS string, caps render.Capabilities, known appSetProjects, notes bool, memo *RenderMemo, found []entry) ([]entry, claims, []Note, []report.Result, error) {
	c := claims{docs: map[string]bool{}, dirs: map[string]bool{}}
	var out []entry
	var skipNotes []Note
	var failures []report.Result
	seen := map[string]bool{}
	pending := applications(found)
	for depth := 0; len(pending) > 0; depth++ {
		if depth == maxAppDepth {
			skipNotes = append(skipNotes, Note{File: pending[0].file, Line: pending[0].doc.Line,
				Message: fmt.Sprintf("Applications rendered by Applications more than %d levels deep are not rendered", maxAppDepth)})
			break
		}
		var jobs []appJob
		for _, a := range pending {
			name, _ := nestedString(a.doc.Object, "metadata", "name")
			ns, _ := nestedString(a.doc.Object, "metadata", "namespace")
			key := docKey(a.doc) + "\x00" + ns + "/" + name
			if !seen[key] {
				seen[key] = true
				jobs = append(jobs, appJob{app: a, name: name})
			}
		}
		results := make([]appRender, len(jobs))
		errs := make([]error, len(jobs))
		err := forEach(ctx, len(jobs), func(ctx context.Context, i int) error {
			obj := jobs[i].app.doc.Object
			if r, ok := memo.lookup(obj); ok {
				results[i] = r
				return ctx.Err()
			}
			results[i], errs[i] = renderApplication(ctx, svc, obj, controlNS, caps, known)
			if errs[i] == nil && failedSource(results[i].Sources) == nil {
				memo.keep(obj, results[i])
			}
			return ctx.Err()
		})
		if err != nil {
			return nil, c, nil, nil, err
		}
		pending = nil
		for i, j := range jobs {
			res, err := results[i], errs[i]
			if notes {
				for _, msg := range res.Skipped {
					skipNotes = append(skipNotes, Note{File: j.app.file, Line: j.app.doc.Line, Message: fmt.Sprintf("Application %q %s", j.name, msg)})
				}
			}
			for _, d := range res.Claimed {
				c.dirs[cleanRel(d)] = true
			}
			if f := failedSource(res.Sources); err == nil && f != nil {
				// An Application with a source that failed renders
				// nothing; the failed source's directory is claimed, so
				// that its walked copy does not report the same failure
				// again.
				c.dirs[cleanRel(f.Dir)] = true
				err = f.Err
			}
			if err != nil {
				failures = append(failures, j.failure(err))
				continue
			}
			for _, src := range res.Sources {
				if src.Result.Kind == render.KindDirectory {
					for _, d := range src.Result.Documents {
						c.docs[docKey(d)] = true
					}
				} else {
					c.dirs[cleanRel(src.Dir)] = true
				}
				for _, d := range src.Result.Documents {
					e := entry{doc: d, root: root.given, file: d.File, app: j.app.doc.Object, appName: j.name}
					out = append(out, e)
					if isKind(d.Object, "argoproj.io", "Application") {
						pending = append(pending, e)
					}
				}
				for _, n := range src.Result.Notes {
					skipNotes = append(skipNotes, Note{File: n.File, Line: n.Line, Message: n.Message})
				}
			}
		}
	}
	return out, c, skipNotes, failures, nil
}

// failedSource is the first source that failed to render, nil when none
// did.
func failedSource(srcs []server.SourceRender) *server.SourceRender {
	for i := range srcs {
		if srcs[i].Err != nil {
			return &srcs[i]
		}
	}
	return nil
}

// RenderApplication renders the Application document app (an object as
// decoded from YAML or JSON) the way Run renders each Application it
// finds: the sources whose repository is repoURL (any spelling
// reposerver.NormalizeURL takes to the same URL) are rendered from the
// checkout at repoRoot, in source order, with renderer (nil renders in
// process), and the other sources are left out, as Run leaves them out
// with a note. Argo CD is taken to run in policies.DefaultArgoCDNamespace.
// It returns the rendered objects.
//
// The errors are Run's without the Application's file, line and name: an
// Application the engine refuses is a *render.UnsupportedError naming the
// field, a field of the wrong type is named, and a failed render names the
// source's field ("spec.sources[1]: render helm charts/web: ...").
//
// Run renders through the same steps (renderApplication, the repo-server
// service); this entry point lets a test hold the objects of one
// Application against the engine's.
func RenderApplication(ctx context.Context, app map[string]any, repoRoot, repoURL string, renderer Renderer) ([]map[string]any, error) {
	u := reposerver.NormalizeURL(repoURL)
	if u == "" {
		return nil, fmt.Errorf("render application: %q is not a repository URL", reposerver.RedactURL(repoURL))
	}
	root, err := openRepoRoot(repoRoot)
	if err != nil {
		return nil, err
	}
	svc, err := newAppService(checkout{root: root, repoURL: u}, nil, nil, localRenderer{r: renderer}, nil, render.DefaultLimits())
	if err != nil {
		return nil, err
	}
	res, err := renderApplication(ctx, svc, app, policies.DefaultArgoCDNamespace, render.Capabilities{}, appSetProjects{})
	if f := failedSource(res.Sources); err == nil && f != nil {
		err = f.Err
	}
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	for _, s := range res.Sources {
		for _, d := range s.Result.Documents {
			objs = append(objs, d.Object)
		}
	}
	return objs, nil
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
