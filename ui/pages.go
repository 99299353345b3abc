package ui

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/internal/appops"
	"github.com/tollgate-dev/tollgate/internal/apptext"
	"github.com/tollgate-dev/tollgate/internal/objdiff"
)

// pageNames are the templates in templates/, each defining "main" for the
// layout.
var pageNames = []string{"list", "app", "diff", "resource", "project", "audit", "login", "error"}

// pageSet holds one template per page: the layout with that page's main.
type pageSet map[string]*template.Template

func parseTemplates() (pageSet, error) {
	funcs := template.FuncMap{
		"lower": strings.ToLower,
		"join":  strings.Join,
		"path":  url.PathEscape,
		"short": v1alpha1.ShortRevision,
		"title": func(msg string) string { t, _, _ := strings.Cut(msg, "\n"); return t },
		"date":  apptext.Time,
	}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("ui: parse layout: %w", err)
	}
	set := pageSet{}
	for _, name := range pageNames {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui: parse %s: %w", name, err)
		}
		set[name] = t
	}
	return set, nil
}

// view is what every page template gets.
type view struct {
	Title string
	// User is who the page acts as; empty on the sign-in page.
	User string
	// SignOut is set for token sessions, which can be ended.
	SignOut bool
	// CSRF goes into every form.
	CSRF string
	// Watch is what the page shows, for ui.js: "*" (every Application),
	// "namespace/name", or "" (no live updates).
	Watch string
	Data  any
}

// fragmentHeader asks for the page's main part only (ui.js's refresh).
const fragmentHeader = "X-Tollgate-Fragment"

// render writes page with data, as a whole page or, for ui.js, its main
// part.
func (s *Server) render(w http.ResponseWriter, r *http.Request, p *person, status int, page string, v view) {
	v.CSRF = s.auth.csrfToken(w, r)
	if p != nil {
		v.User = p.User
		v.SignOut = p.session != ""
	}
	name := "layout"
	if r.Header.Get(fragmentHeader) == "1" {
		name = "main"
	}
	var buf bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&buf, name, v); err != nil {
		s.opts.Log.Error(err, "Render failed", "page", page)
		http.Error(w, "render failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail shows err with the status it maps to: the API server's 403 and 404
// as they are, a refused request 409.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, p *person, err error) {
	code := statusOf(err)
	if code >= 500 {
		s.opts.Log.Error(err, "Request failed", "path", r.URL.Path)
	}
	s.render(w, r, p, code, "error", view{Title: http.StatusText(code), Data: struct {
		Code    int
		Message string
	}{code, err.Error()}})
}

// statusOf is the HTTP status err answers: the API server's 401, 403 and
// 404 as they are, what the Application's project does not permit (a
// diff reading outside it) 403, a refused request or a lost race 409.
func statusOf(err error) int {
	var he *httpError
	var refused *appops.RefusedError
	switch {
	case errors.As(err, &he):
		return he.code
	case apierrors.IsUnauthorized(err): // an expired or revoked token: sign in again
		return http.StatusUnauthorized
	case apierrors.IsForbidden(err), authority.IsRefused(err):
		return http.StatusForbidden
	case apierrors.IsNotFound(err):
		return http.StatusNotFound
	case errors.As(err, &refused), apierrors.IsConflict(err):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// signedIn runs h as the request's person, or sends them to sign in.
func (s *Server) signedIn(h func(http.ResponseWriter, *http.Request, *person)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := s.auth.identify(r)
		if errors.Is(err, errNotSignedIn) {
			if r.Method == http.MethodGet && r.URL.Path != "/events" {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Error(w, "not signed in", http.StatusUnauthorized)
			return
		}
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		p, err := s.clients.get(id)
		if err != nil {
			s.fail(w, r, nil, err)
			return
		}
		h(w, r, p)
	}
}

// shows reports whether Applications of namespace are served: the
// control-plane namespace and the --application-namespaces globs.
func (s *Server) shows(namespace string) bool {
	return v1alpha1.NamespaceEnabled(namespace, s.opts.Namespace, s.opts.ApplicationNamespaces)
}

// appNamespaces are the namespaces whose Applications are served, as far
// as the UI's own identity can list namespaces.
func (s *Server) appNamespaces(ctx context.Context) []string {
	out := []string{s.opts.Namespace}
	all, err := s.allNamespaces(ctx)
	if err != nil {
		for _, g := range s.opts.ApplicationNamespaces { // literal names still count
			if !strings.ContainsAny(g, `*?[{\\/`) && g != s.opts.Namespace {
				out = append(out, g)
			}
		}
		return out
	}
	for _, ns := range all {
		if ns != s.opts.Namespace && s.shows(ns) {
			out = append(out, ns)
		}
	}
	return out
}

// listApps lists the Applications p may list: in one call when p may list
// them everywhere, else namespace by namespace, skipping the forbidden.
func (s *Server) listApps(ctx context.Context, p *person) ([]v1alpha1.Application, error) {
	var list v1alpha1.ApplicationList
	err := p.c.List(ctx, &list)
	if err == nil {
		return slices.DeleteFunc(list.Items, func(a v1alpha1.Application) bool { return !s.shows(a.Namespace) }), nil
	}
	if !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	var apps []v1alpha1.Application
	for _, ns := range s.appNamespaces(ctx) {
		var l v1alpha1.ApplicationList
		switch err := p.c.List(ctx, &l, client.InNamespace(ns)); {
		case apierrors.IsForbidden(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("list applications in %s: %w", ns, err)
		}
		apps = append(apps, l.Items...)
	}
	return apps, nil
}

func (s *Server) listPage(w http.ResponseWriter, r *http.Request, p *person) {
	apps, err := s.listApps(r.Context(), p)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	all := make([]appRow, 0, len(apps))
	for i := range apps {
		all = append(all, newAppRow(&apps[i]))
	}
	slices.SortFunc(all, func(a, b appRow) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	q := r.URL.Query()
	f := listFilter{Project: q.Get("project"), Sync: q.Get("sync"), Health: q.Get("health"), Namespace: q.Get("namespace"), Query: q.Get("q")}
	rows := slices.DeleteFunc(slices.Clone(all), func(r appRow) bool { return !f.match(r) })
	s.render(w, r, p, http.StatusOK, "list", view{Title: "Applications", Watch: "*", Data: map[string]any{
		"Rows": rows, "Total": len(all), "Filter": f,
		"Projects":   choices(all, func(r appRow) string { return r.Project }),
		"Syncs":      choices(all, func(r appRow) string { return r.Sync }),
		"Healths":    choices(all, func(r appRow) string { return r.Health }),
		"Namespaces": choices(all, func(r appRow) string { return r.Namespace }),
	}})
}

// getApp reads the Application of the request's path as p.
func (s *Server) getApp(ctx context.Context, r *http.Request, p *person) (*v1alpha1.Application, error) {
	key := client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	if !s.shows(key.Namespace) {
		return nil, &httpError{http.StatusNotFound, fmt.Errorf("namespace %s is not one whose Applications this UI serves", key.Namespace)}
	}
	var app v1alpha1.Application
	if err := p.c.Get(ctx, key, &app); err != nil {
		return nil, fmt.Errorf("get application %s/%s: %w", key.Namespace, key.Name, err)
	}
	return &app, nil
}

// done are the notices an action's redirect may show.
var done = map[string]string{
	"sync":     "Sync requested: the controller starts it within seconds.",
	"refresh":  "Refresh requested: the controller compares with Git now.",
	"rollback": "Rollback requested: the controller syncs the chosen deployment.",
}

func (s *Server) appPage(w http.ResponseWriter, r *http.Request, p *person) {
	s.showApp(w, r, p, http.StatusOK, done[r.URL.Query().Get("done")], "")
}

// showApp renders the Application page with a notice or an error.
func (s *Server) showApp(w http.ResponseWriter, r *http.Request, p *person, status int, notice, actionErr string) {
	ctx := r.Context()
	app, err := s.getApp(ctx, r, p)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	refusedRev, vs := verdicts(app)
	var conds []v1alpha1.ApplicationCondition
	for _, c := range app.Status.Conditions {
		if c.Type != v1alpha1.ApplicationConditionPolicyViolation {
			conds = append(conds, c)
		}
	}
	var sources []string
	for _, src := range app.Sources() {
		sources = append(sources, sourceText(src))
	}
	tree, notes := s.tree(ctx, p, app)
	s.render(w, r, p, status, "app", view{Title: app.Name, Watch: app.Namespace + "/" + app.Name, Data: map[string]any{
		"App": app, "Row": newAppRow(app), "Sources": sources,
		"RefusedRevision": refusedRev, "Verdicts": vs, "Conditions": conds,
		"Operation": newOpView(app.Status.OperationState), "History": history(app, s.historyCommits(ctx, app)),
		"Tree": tree, "TreeNotes": notes,
		"CanAct":          s.access.allowed(ctx, p, "patch", v1alpha1.GroupVersion.Group, "applications", app.Namespace, app.Name),
		"RollbackRefusal": rollbackRefusal(app),
		"Diffs":           s.opts.Repos != nil,
		"Notice":          notice, "Error": actionErr,
	}})
}

// act runs the Sync, Refresh or Rollback the form asks for, as p.
func (s *Server) act(w http.ResponseWriter, r *http.Request, p *person) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := s.auth.checkCSRF(r); err != nil {
		s.fail(w, r, p, &httpError{http.StatusForbidden, err})
		return
	}
	key := client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	if !s.shows(key.Namespace) {
		s.fail(w, r, p, &httpError{http.StatusNotFound, fmt.Errorf("namespace %s is not one whose Applications this UI serves", key.Namespace)})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	action := r.PathValue("action")
	prune := r.PostFormValue("prune") == "true"
	var err error
	switch action {
	case "sync":
		err = appops.Sync(ctx, p.c, key, appops.SyncOptions{Prune: prune}, p.User)
	case "refresh":
		typ := v1alpha1.RefreshTypeNormal
		if r.PostFormValue("hard") == "true" {
			typ = v1alpha1.RefreshTypeHard
		}
		err = appops.RequestRefresh(ctx, p.c, key, string(typ))
	case "rollback":
		_, err = appops.Rollback(ctx, p.c, key, r.PostFormValue("id"), prune, p.User)
		if errors.Is(err, appops.ErrAutomatedRollback) {
			err = &appops.RefusedError{Err: appops.ErrAutomatedRollback}
		}
	default:
		s.fail(w, r, p, &httpError{http.StatusNotFound, fmt.Errorf("no action %q: want sync, refresh or rollback", action)})
		return
	}
	if err != nil {
		// Shown on the Application's page, unless the person may not see
		// it or it is gone.
		code := statusOf(err)
		if code == http.StatusNotFound || code == http.StatusForbidden && !s.access.allowed(r.Context(), p, "get", v1alpha1.GroupVersion.Group, "applications", key.Namespace, key.Name) {
			s.fail(w, r, p, err)
			return
		}
		s.showApp(w, r, p, code, "", action+" refused: "+err.Error())
		return
	}
	http.Redirect(w, r, "/applications/"+url.PathEscape(key.Namespace)+"/"+url.PathEscape(key.Name)+"?done="+action, http.StatusSeeOther)
}

// diffLine is one line of a unified diff with its CSS class.
type diffLine struct{ Class, Text string }

type diffView struct {
	Header, Error string
	Lines         []diffLine
}

// diffPage compares the Application as `tollgate app diff` does: its
// sources rendered at their target revisions beside the live objects, read
// and dry-run as p (the repository credentials are the UI's, a remote
// cluster's its Secret's), and only those the Application's project
// permits: otherwise the page is 403 with the refusal, naming each object
// and rule. A query naming one object shows only it.
func (s *Server) diffPage(w http.ResponseWriter, r *http.Request, p *person) {
	if s.opts.Repos == nil {
		s.fail(w, r, p, &httpError{http.StatusNotImplemented, errors.New("this UI renders no diffs: it was started without a way to fetch and render sources")})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	app, err := s.getApp(ctx, r, p)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	d, err := s.diff(ctx, p, app)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	q := r.URL.Query()
	var objs []diffView
	for _, o := range d.Objects {
		if !o.Modified || q.Get("kind") != "" && (o.Ref.Kind != q.Get("kind") || o.Ref.Name != q.Get("name") || o.Ref.Namespace != q.Get("namespace") || o.Ref.Group != q.Get("group")) {
			continue
		}
		v := diffView{Header: fmt.Sprintf("%s/%s %s/%s", o.Ref.Group, o.Ref.Kind, o.Ref.Namespace, o.Ref.Name), Error: o.Error}
		if o.Error == "" {
			text, err := o.UnifiedDiff()
			if err != nil {
				s.fail(w, r, p, err)
				return
			}
			for line := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
				v.Lines = append(v.Lines, diffLine{Class: lineClass(line), Text: line})
			}
		}
		objs = append(objs, v)
	}
	s.render(w, r, p, http.StatusOK, "diff", view{Title: "Diff of " + app.Name, Data: map[string]any{
		"App": app, "Revisions": d.Revisions, "Objects": objs, "Warnings": d.Warnings,
	}})
}

func lineClass(line string) string {
	switch {
	case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
		return "file"
	case strings.HasPrefix(line, "@@"):
		return "hunk"
	case strings.HasPrefix(line, "-"):
		return "del"
	case strings.HasPrefix(line, "+"):
		return "add"
	}
	return ""
}

// resourcePage shows one live object of the Application's tree as YAML,
// read as p, with a Secret's values masked as Argo CD masks them.
func (s *Server) resourcePage(w http.ResponseWriter, r *http.Request, p *person) {
	ctx := r.Context()
	app, err := s.getApp(ctx, r, p)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	q := r.URL.Query()
	gk := schema.GroupKind{Group: q.Get("group"), Kind: q.Get("kind")}
	var versions []string
	if v := q.Get("version"); v != "" {
		versions = append(versions, v)
	}
	m, err := s.mapper.RESTMapping(gk, versions...)
	if err != nil {
		s.fail(w, r, p, &httpError{http.StatusNotFound, fmt.Errorf("kind %s: %w", gk, err)})
		return
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(m.GroupVersionKind)
	if err := p.c.Get(ctx, client.ObjectKey{Namespace: q.Get("namespace"), Name: q.Get("name")}, obj); err != nil {
		s.fail(w, r, p, fmt.Errorf("get %s %s: %w", gk.Kind, q.Get("name"), err))
		return
	}
	masked := maskObject(obj)
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		s.fail(w, r, p, err)
		return
	}
	s.render(w, r, p, http.StatusOK, "resource", view{Title: gk.Kind + " " + obj.GetName(), Data: map[string]any{
		"App": app, "Object": obj, "Kind": gk.Kind, "YAML": string(data), "Masked": masked,
	}})
}

// maskObject drops managedFields and masks a Secret's values (data,
// stringData and the last-applied annotation); it reports whether it
// masked.
func maskObject(obj *unstructured.Unstructured) bool {
	obj.SetManagedFields(nil)
	gvk := obj.GroupVersionKind()
	if gvk.Group != "" || gvk.Kind != "Secret" {
		return false
	}
	objdiff.HideSecretData(obj.Object, nil)
	return true
}

func (s *Server) projectPage(w http.ResponseWriter, r *http.Request, p *person) {
	var proj v1alpha1.AppProject
	key := client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	if err := p.c.Get(r.Context(), key, &proj); err != nil {
		s.fail(w, r, p, fmt.Errorf("get appproject %s/%s: %w", key.Namespace, key.Name, err))
		return
	}
	s.render(w, r, p, http.StatusOK, "project", view{Title: "Project " + proj.Name, Data: map[string]any{
		"Project": &proj, "Words": describeProject(&proj),
	}})
}
