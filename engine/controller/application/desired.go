package application

import (
	"context"
	"fmt"

	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// desiredState is the desired state of an Application (desired.State) and
// the identity of what its comparison depends on besides the live objects
// (see memo.identity).
type desiredState struct {
	*desired.State
	identity string
}

// desiredState asks for the rendered sources. The objects are built at
// once when the Application's last comparison cannot be reused anyway (no
// memo of this identity, or an operation is requested), so that a render
// that cannot be applied fails here; otherwise on first need. A request
// names the render key of the Application's memo, so that an idle resync
// gets no objects back when nothing changed.
func (r *Reconciler) desiredState(ctx context.Context, p *pass, tg *target) (*desiredState, error) {
	listingMaxAge := r.opts.ListingMaxAge
	if tg.refresh || tg.op != nil {
		listingMaxAge = 0
	}
	req, err := r.manifestRequest(ctx, tg, listingMaxAge, true)
	if err != nil {
		return nil, err
	}
	req.KnownKey = r.memoRenderKey(p.key)
	resp, err := r.builder.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := checkSignatures(req, resp); err != nil {
		return nil, err
	}
	d := &desiredState{State: r.builder.State(req, resp, desired.Destination{
		Namespace: p.app.Spec.Destination.Namespace, Mapper: tg.cluster.mapper, Managed: r.managed(tg.cluster.server),
	})}
	// A change of argocd-cm's settings judges the live objects again, as a
	// new render would.
	key := fmt.Sprintf("%s\x00settings-%d", d.RenderKey, r.settingsGen.Load())
	if d.identity, err = identity(tg.app, tg.project, tg.cluster.version, key, d.Revisions); err != nil {
		return nil, err
	}
	if tg.op != nil || r.recall(p.key, d.identity) == nil {
		if err := d.Build(ctx); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// countRenders counts the renders an answer cost.
func (r *Reconciler) countRenders(resp *reposerver.Response) {
	r.metrics.Renders.WithLabelValues("hit").Add(float64(resp.Cached))
	r.metrics.Renders.WithLabelValues("miss").Add(float64(resp.Rendered))
}
