package check

import (
	"sync"

	"github.com/tollgate-dev/tollgate/internal/jsonvalue"

	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/server"
)

// RenderMemo keeps the Applications' renders of one run for a later one:
// tollgate diff's head reuses what its base rendered for the Applications
// the change did not touch. It is safe for concurrent use.
type RenderMemo struct {
	// Reuse reports whether the render kept for kept, the Application as
	// it was then, may stand for app's now; nil reuses nothing.
	Reuse func(kept, app map[string]any) bool

	mu      sync.Mutex
	renders map[string]memoEntry
	reused  int
}

// Reused counts the renders lookups gave out.
func (m *RenderMemo) Reused() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reused
}

type memoEntry struct {
	app    map[string]any
	render appRender
}

// memoKey is an Application's namespace/name.
func memoKey(app map[string]any) string {
	ns, _ := nestedString(app, "metadata", "namespace")
	name, _ := nestedString(app, "metadata", "name")
	return ns + "/" + name
}

// keep records a render that succeeded.
func (m *RenderMemo) keep(app map[string]any, r appRender) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.renders == nil {
		m.renders = map[string]memoEntry{}
	}
	m.renders[memoKey(app)] = memoEntry{app: app, render: r}
}

// lookup returns a copy of the render kept for app when Reuse allows it;
// the documents' objects are copied, so that the two runs never share a
// map.
func (m *RenderMemo) lookup(app map[string]any) (appRender, bool) {
	if m == nil || m.Reuse == nil {
		return appRender{}, false
	}
	m.mu.Lock()
	e, ok := m.renders[memoKey(app)]
	m.mu.Unlock()
	if !ok || !m.Reuse(e.app, app) {
		return appRender{}, false
	}
	m.mu.Lock()
	m.reused++
	m.mu.Unlock()
	out := e.render
	out.Sources = make([]server.SourceRender, len(e.render.Sources))
	for i, s := range e.render.Sources {
		docs := make([]render.Document, len(s.Result.Documents))
		for j, d := range s.Result.Documents {
			d.Object = jsonvalue.Copy(d.Object).(map[string]any)
			docs[j] = d
		}
		s.Result.Documents = docs
		out.Sources[i] = s
	}
	return out, true
}
