package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/tollgate-dev/tollgate/reposerver/cmp"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// Plugins renders the sources of config management plugins: the plugin
// sidecars of the repo-server (PluginSockets), or, under tollgate test,
// local commands.
type Plugins interface {
	// Generate renders src with the plugin named name ("": the one whose
	// discovery rules match) and returns the manifests it printed (each a
	// stream of YAML or JSON documents) and the plugin's name. A plugin
	// that is not run here is an *UnservedPluginError.
	Generate(ctx context.Context, name string, src cmp.Source) (manifests []string, plugin string, err error)
}

// PluginSockets are the plugin sidecars whose sockets are in a directory,
// as Argo CD's repo-server finds them (cmp.DefaultSocketDir).
type PluginSockets string

// Generate implements Plugins with Argo CD's cmp-server protocol.
func (d PluginSockets) Generate(ctx context.Context, name string, src cmp.Source) ([]string, string, error) {
	return cmp.Generate(ctx, string(d), name, src)
}

// UnservedPluginError is a Plugins' answer for a plugin it does not run:
// tollgate test runs only the local commands --plugin names. Render leaves
// such a source out and says so; Generate fails with it.
type UnservedPluginError struct {
	// Name is the plugin the source names, "" for discovery.
	Name string
}

func (e *UnservedPluginError) Error() string {
	if e.Name == "" {
		return "the source discovers its config management plugin, which is not run here"
	}
	return fmt.Sprintf("config management plugin %q is not run here", e.Name)
}

// plugin renders a plugin source: the plugin's output decoded as a
// directory's file would be, each document named after the plugin, within
// the render limits.
func (s *Service) plugin(ctx context.Context, j *job) (render.Result, error) {
	res := render.Result{Kind: render.KindPlugin}
	if s.opts.Plugins == nil {
		return res, errors.New("no config management plugin is configured (the repo-server's --plugin-socket-dir holds no plugin sidecar's socket)")
	}
	// The source's directory, confined to its checkout as a render's is:
	// the plugin runs there.
	if _, err := render.DetectKind(j.checkout.Dir, j.dir(), j.opts); err != nil {
		return res, err
	}
	lim := s.opts.RenderLimits
	manifests, name, err := s.opts.Plugins.Generate(ctx, j.opts.Plugin.Name, cmp.Source{
		AppName: j.appName, Root: j.checkout.Dir, Path: j.dir(), Env: j.opts.Plugin.Env,
	})
	if err != nil {
		return res, err
	}
	for i, m := range manifests {
		file := fmt.Sprintf("plugin %s output", name)
		if len(manifests) > 1 {
			file = fmt.Sprintf("plugin %s output %d", name, i+1)
		}
		docs, notes, err := render.Decode(file, []byte(m), lim)
		if err != nil {
			return res, err
		}
		for k := range docs {
			docs[k].Rendered, docs[k].Origin = true, render.KindPlugin
		}
		res.Documents = append(res.Documents, docs...)
		res.Notes = append(res.Notes, notes...)
	}
	return res, nil
}
