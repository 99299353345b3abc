package server

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/appset"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// generation asks a child to generate an ApplicationSet's Applications.
// API objects travel as JSON, their own wire form.
type generation struct {
	Set []byte
	// Clusters are the cluster Secrets, when the parent has any source of
	// them (HasClusters).
	Clusters    []byte
	HasClusters bool
	// HasGit and HasPermit say whether the parent serves Git checkouts and
	// judges repositories; without them the child refuses git generators
	// as appset.Generate does.
	HasGit, HasPermit bool
	// HasSCM and HasPlugins say whether the parent asks SCM providers'
	// APIs and generator plugins.
	HasSCM, HasPlugins bool
	// Decisions are Sources.Decisions.
	Decisions map[string]reposerver.ClusterDecisions
}

// message is what a generating child sends: a call the parent answers
// with a reply, or, last, the result.
type message struct {
	Call   *call
	Result *result
}

// call asks the parent to judge a repository a git generator would read
// (Permit) or to check it out (Checkout).
type call struct {
	Permit, Checkout bool
	Field            string
	RepoURL          string
	Revision         string
	// PullRequests and Repositories ask for what the generator Generator
	// lists (JSON of a v1alpha1.PullRequestGenerator or
	// SCMProviderGenerator, as rendered).
	PullRequests, Repositories bool
	Generator                  []byte
	// Plugin asks the plugin of the plugin generator Generator, for the
	// ApplicationSet SetName.
	Plugin  bool
	SetName string
}

// reply answers a call: the checkout's directory, which the child only
// reads, or the error.
type reply struct {
	Dir string
	// Data is a listing's JSON.
	Data []byte
	Err  *remoteError
}

// result is a generation's outcome: the Applications as JSON, or the
// error.
type result struct {
	Applications []byte
	Err          *remoteError
}

// remoteError is an error that crossed the process boundary: its message,
// its ApplicationSet reason (appset.ReasonOf), whether it was a repository
// that could not be reached (reposerver.ErrRepoUnreachable) and the fetch
// limit it passed, so that errors.Is and errors.As answer on either side
// as they would in one process.
type remoteError struct {
	Message     string
	Reason      string
	Unreachable bool
	// NotFound is a repository an SCM provider does not know
	// (scm.ErrRepositoryNotFound).
	NotFound bool
	// NotGenerated is appset.ErrNotGeneratedHere.
	NotGenerated bool
	FetchLimit   *source.LimitError
}

func newRemoteError(err error) *remoteError {
	e := &remoteError{Message: err.Error(), Reason: appset.ReasonOf(err), Unreachable: errors.Is(err, reposerver.ErrRepoUnreachable),
		NotFound: errors.Is(err, scm.ErrRepositoryNotFound), NotGenerated: errors.Is(err, appset.ErrNotGeneratedHere)}
	errors.As(err, &e.FetchLimit)
	return e
}

func (e *remoteError) Error() string { return e.Message }

func (e *remoteError) Unwrap() []error {
	var out []error
	if e.Unreachable {
		out = append(out, reposerver.ErrRepoUnreachable)
	}
	if e.NotFound {
		out = append(out, scm.ErrRepositoryNotFound)
	}
	if e.NotGenerated {
		out = append(out, appset.ErrNotGeneratedHere)
	}
	if e.FetchLimit != nil {
		out = append(out, e.FetchLimit)
	}
	return out
}

// err is the error as the caller of appset.Generate would have seen it.
func (e *remoteError) err() error {
	if e.Reason != "" {
		return &appset.Error{Reason: e.Reason, Err: e}
	}
	return e
}

// Generate generates like appset.Generate, in a child process under
// r.Limits: the templates are executed, and the files git generators read
// are parsed, there. src.Git and src.Permit are called in this process
// when the child asks (the time they take does not count against the time
// limit); src.Clusters once, before the child starts.
func (r *Runner) Generate(ctx context.Context, set *v1alpha1.ApplicationSet, src appset.Sources) ([]reposerver.Generated, error) {
	g := &generation{HasGit: src.Git != nil, HasPermit: src.Permit != nil, HasSCM: src.SCM != nil, HasPlugins: src.Plugins != nil, Decisions: src.Decisions}
	var err error
	if g.Set, err = json.Marshal(set); err != nil {
		return nil, fmt.Errorf("encode applicationset: %w", err)
	}
	if src.Clusters != nil {
		secrets, err := src.Clusters(ctx)
		if err != nil {
			return nil, err
		}
		if g.Clusters, err = json.Marshal(secrets); err != nil {
			return nil, fmt.Errorf("encode cluster secrets: %w", err)
		}
		g.HasClusters = true
	}
	c, err := r.start(ctx, request{Generation: g}, workGeneration)
	if err != nil {
		return nil, err
	}
	dec := gob.NewDecoder(c.stdout)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			return nil, c.wait(ctx, fmt.Errorf("read from the generating process: %w", err))
		}
		if m.Call != nil {
			if !c.pause() {
				continue // killed at its limit: the next read fails
			}
			rep := answer(ctx, src, m.Call)
			c.resume()
			if err := c.enc.Encode(rep); err != nil {
				return nil, c.wait(ctx, fmt.Errorf("answer the generating process: %w", err))
			}
			continue
		}
		if err := c.wait(ctx, nil); err != nil {
			return nil, err
		}
		switch {
		case m.Result == nil:
			return nil, errors.New("the generating process sent no result")
		case m.Result.Err != nil:
			return nil, m.Result.Err.err()
		}
		var out []reposerver.Generated
		if err := json.Unmarshal(m.Result.Applications, &out); err != nil {
			return nil, fmt.Errorf("decode generated applications: %w", err)
		}
		if len(out) > r.Limits.Objects {
			return nil, &LimitError{Limit: "objects", Value: fmt.Sprint(r.Limits.Objects), Work: workGeneration}
		}
		return out, nil
	}
}

// answer serves one call of a generating child with src.
func answer(ctx context.Context, src appset.Sources, c *call) reply {
	var err error
	var rep reply
	switch {
	case c.Permit && src.Permit != nil:
		err = src.Permit(ctx, c.Field, c.RepoURL)
	case c.Checkout && src.Git != nil:
		rep.Dir, err = src.Git.Checkout(ctx, c.RepoURL, c.Revision)
	case c.PullRequests && src.SCM != nil:
		rep.Data, err = listFor(c, func(gen *v1alpha1.PullRequestGenerator) ([]scm.PullRequest, error) {
			return src.SCM.PullRequests(ctx, c.Field, gen)
		})
	case c.Plugin && src.Plugins != nil:
		rep.Data, err = listFor(c, func(gen *v1alpha1.PluginGenerator) ([]map[string]any, error) {
			return src.Plugins.Params(ctx, c.Field, c.SetName, gen)
		})
	case c.Repositories && src.SCM != nil:
		rep.Data, err = listFor(c, func(gen *v1alpha1.SCMProviderGenerator) ([]scm.Repository, error) {
			return src.SCM.Repositories(ctx, c.Field, gen)
		})
	default:
		err = fmt.Errorf("%s: the generating process asked for what it was not given", c.Field)
	}
	if err != nil {
		return reply{Err: newRemoteError(err)}
	}
	return rep
}

// listFor decodes c's generator as G and answers with what list lists,
// as JSON.
func listFor[G, T any](c *call, list func(*G) ([]T, error)) ([]byte, error) {
	var gen G
	if err := json.Unmarshal(c.Generator, &gen); err != nil {
		return nil, err
	}
	items, err := list(&gen)
	if err != nil {
		return nil, err
	}
	return json.Marshal(items)
}

// serveGeneration is the child's side of Generate.
func serveGeneration(ctx context.Context, g *generation, dec *gob.Decoder, enc *gob.Encoder) error {
	var set v1alpha1.ApplicationSet
	if err := json.Unmarshal(g.Set, &set); err != nil {
		return fmt.Errorf("decode applicationset: %w", err)
	}
	p := &parent{dec: dec, enc: enc}
	var src appset.Sources
	if g.HasGit {
		src.Git = p
	}
	if g.HasPermit {
		src.Permit = p.permit
	}
	if g.HasSCM {
		src.SCM = p
	}
	if g.HasPlugins {
		src.Plugins = p
	}
	src.Decisions = g.Decisions
	if g.HasClusters {
		var secrets []corev1.Secret
		if err := json.Unmarshal(g.Clusters, &secrets); err != nil {
			return fmt.Errorf("decode cluster secrets: %w", err)
		}
		src.Clusters = func(context.Context) ([]corev1.Secret, error) { return secrets, nil }
	}
	var res result
	gen, err := appset.Generate(ctx, &set, src)
	if err == nil {
		res.Applications, err = json.Marshal(gen)
	}
	if err != nil {
		res.Err = newRemoteError(err)
	}
	if err := enc.Encode(message{Result: &res}); err != nil {
		return fmt.Errorf("write generation result: %w", err)
	}
	return nil
}

// parent is the generating child's way to the parent: the Git checkouts
// and repository judgments it asks for.
type parent struct {
	dec *gob.Decoder
	enc *gob.Encoder
}

func (p *parent) call(c call) (reply, error) {
	if err := p.enc.Encode(message{Call: &c}); err != nil {
		return reply{}, fmt.Errorf("%s: ask the parent process: %w", c.Field, err)
	}
	var rep reply
	if err := p.dec.Decode(&rep); err != nil {
		return reply{}, fmt.Errorf("%s: read the parent process's answer: %w", c.Field, err)
	}
	if rep.Err != nil {
		return reply{}, rep.Err
	}
	return rep, nil
}

func (p *parent) permit(_ context.Context, field, repoURL string) error {
	_, err := p.call(call{Permit: true, Field: field, RepoURL: repoURL})
	return err
}

// Checkout implements appset.GitReader.
func (p *parent) Checkout(_ context.Context, repoURL, revision string) (string, error) {
	rep, err := p.call(call{Checkout: true, Field: "git generator", RepoURL: repoURL, Revision: revision})
	return rep.Dir, err
}

// PullRequests implements appset.SCMLister.
func (p *parent) PullRequests(_ context.Context, field string, gen *v1alpha1.PullRequestGenerator) ([]scm.PullRequest, error) {
	return askList[scm.PullRequest](p, call{PullRequests: true, Field: field}, gen)
}

// Repositories implements appset.SCMLister.
func (p *parent) Repositories(_ context.Context, field string, gen *v1alpha1.SCMProviderGenerator) ([]scm.Repository, error) {
	return askList[scm.Repository](p, call{Repositories: true, Field: field}, gen)
}

// Params implements appset.PluginCaller.
func (p *parent) Params(_ context.Context, field, set string, gen *v1alpha1.PluginGenerator) ([]map[string]any, error) {
	return askList[map[string]any](p, call{Plugin: true, Field: field, SetName: set}, gen)
}

// askList asks the parent for what the generator gen lists.
func askList[T any](p *parent, c call, gen any) ([]T, error) {
	var err error
	if c.Generator, err = json.Marshal(gen); err != nil {
		return nil, err
	}
	rep, err := p.call(c)
	if err != nil {
		return nil, err
	}
	var items []T
	if err := json.Unmarshal(rep.Data, &items); err != nil {
		return nil, fmt.Errorf("%s: decode the parent's answer: %w", c.Field, err)
	}
	return items, nil
}
