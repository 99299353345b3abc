package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/chart"
	"github.com/tollgate-dev/tollgate/reposerver/render"
	"github.com/tollgate-dev/tollgate/reposerver/source"
)

// NotServedError is a Fetcher's answer for a repository it does not serve:
// tollgate test's checkout serves the repository under test only. Render
// leaves such a source out and says so; Generate fails with it.
type NotServedError struct {
	RepoURL string
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("repository %s is not served here", reposerver.RedactURL(e.RepoURL))
}

// fetched is one source of a request at one commit, or one chart
// version.
type fetched struct {
	source   v1alpha1.ApplicationSource
	field    string
	checkout source.Checkout
	// chart is set for a Helm repository source: checkout.Dir is the
	// unpacked chart, checkout.Revision its version.
	chart bool
	// unserved is set, in a partial fetch, for a source that was not
	// fetched: one without a repository URL, one the Fetcher does not
	// serve, or a chart source when the Service fetches no charts.
	unserved bool
}

// dir is the source's directory in its checkout: a chart source's path is
// not used, as in Argo CD.
func (f fetched) dir() string {
	if f.chart || f.source.Path == "" {
		return "."
	}
	return f.source.Path
}

// fetch resolves and checks out every source of req at its targetRevision,
// verifying the commits of Git sources when req has a
// reposerver.SignatureCheck. With partial set, a source that cannot be
// fetched here (see fetched.unserved) is marked rather than failing the
// request.
func (s *Service) fetch(ctx context.Context, req *reposerver.Request, partial bool) ([]fetched, error) {
	opts := []source.FetchOption{source.ListingMaxAge(req.ListingMaxAge)}
	if req.SignatureCheck != nil {
		kr, err := source.NewKeyring(req.SignatureCheck.Keys)
		if err != nil {
			return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: "verify commit signatures: " + err.Error()}
		}
		opts = append(opts, source.VerifySignature(kr))
	}
	out := make([]fetched, len(req.Sources))
	for i, rs := range req.Sources {
		src, field := rs.Source, req.SourceField(i)
		out[i] = fetched{source: src, field: field}
		if partial && (src.RepoURL == "" || (src.Chart != "" && s.opts.Charts == nil)) {
			out[i].unserved = true
			continue
		}
		if src.RepoURL == "" {
			return nil, &reposerver.Error{Code: reposerver.CodeInvalid, Message: field + ".repoURL is empty"}
		}
		revision := cmp.Or(rs.Revision, src.TargetRevision)
		if src.Chart != "" {
			f, err := s.fetchChart(ctx, src, revision, field, chartOptions(req, src))
			if err != nil {
				return nil, err
			}
			out[i] = f
			continue
		}
		co, err := s.sources.Fetch(ctx, src.RepoURL, revision, rs.Credentials, opts...)
		var ns *NotServedError
		if partial && errors.As(err, &ns) {
			out[i].unserved = true
			continue
		}
		if err != nil {
			return nil, err
		}
		out[i].checkout = co
	}
	return out, nil
}

// signatures returns, when req has a reposerver.SignatureCheck, the signatures of
// srcs (one per source, the zero reposerver.Signature for a chart source) and whether
// every Git source's commit is signed with an allowed key; without one,
// nil and true.
func signatures(req *reposerver.Request, srcs []fetched) ([]reposerver.Signature, bool) {
	if req.SignatureCheck == nil {
		return nil, true
	}
	sigs := make([]reposerver.Signature, len(srcs))
	allowed := true
	for i, f := range srcs {
		if f.chart {
			continue // a Helm repository or OCI source: not verified
		}
		if f.checkout.Signature == nil {
			// A Fetcher that did not verify: nothing is known.
			sigs[i] = reposerver.Signature{Status: reposerver.SignatureUnknown, Reason: "the commit was not verified"}
		} else {
			sigs[i] = *f.checkout.Signature
		}
		allowed = allowed && sigs[i].SignedBy(req.SignatureCheck.Allowed)
	}
	return sigs, allowed
}

// fetchChart fetches the chart of a Helm repository source at revision
// (a version or a constraint).
func (s *Service) fetchChart(ctx context.Context, src v1alpha1.ApplicationSource, revision, field string, o chart.FetchOptions) (fetched, error) {
	if s.opts.Charts == nil {
		return fetched{}, &reposerver.Error{Code: reposerver.CodeInvalid, Message: fmt.Sprintf("%s.chart is not supported: this repo-server fetches no Helm repository sources (chart %q from %s)", field, src.Chart, reposerver.RedactURL(src.RepoURL))}
	}
	ch, err := s.opts.Charts.Fetch(ctx, src.RepoURL, src.Chart, revision, o)
	if err != nil {
		return fetched{}, chartError(fmt.Sprintf("%s: fetch chart %s", field, src.Chart), err)
	}
	return fetched{source: src, field: field, chart: true, checkout: source.Checkout{Dir: ch.Dir, Revision: ch.Version}}, nil
}

// dependencies fetches what the chart of f declares but does not vendor.
func (s *Service) dependencies(ctx context.Context, f fetched, o chart.FetchOptions) ([]render.ChartDependency, error) {
	deps, err := s.opts.Charts.Dependencies(ctx, f.checkout.Dir, f.dir(), o)
	if err != nil {
		return nil, chartError(f.field, err)
	}
	var out []render.ChartDependency
	for _, d := range deps {
		out = append(out, render.ChartDependency{Name: d.Name, Archive: d.Archive, Dir: d.Dir})
	}
	return out, nil
}

// chartOptions are the chart fetch options of source src of r: the
// project's Helm repositories, dependencies only from repositories its
// sourceRepos permit, the source's helm.passCredentials, and indexes as
// old as Git listings may be.
func chartOptions(r *reposerver.Request, src v1alpha1.ApplicationSource) chart.FetchOptions {
	return chart.FetchOptions{
		Repositories:    r.HelmRepositories,
		PassCredentials: src.Helm != nil && src.Helm.PassCredentials,
		IndexMaxAge:     r.ListingMaxAge,
		Permitted: func(ctx context.Context, repoURL string, oci bool) (bool, error) {
			return reposerver.RepositoryPermitted(ctx, r.SourceRepos, repoURL, oci)
		},
		Project: r.Project,
	}
}

// chartError is a failed chart fetch as the wire carries it: a repository
// that could not be reached is retried like an unreachable Git server.
func chartError(what string, err error) *reposerver.Error {
	code := reposerver.CodeInvalid
	switch {
	case errors.Is(err, chart.ErrUnreachable):
		code = reposerver.CodeUnreachable
	case errors.Is(err, chart.ErrTooLarge):
		code = reposerver.CodeLimit
	}
	return &reposerver.Error{Code: code, Message: what + ": " + err.Error()}
}

// job is one source of a request, fetched and resolved: how to render it,
// or why it is not rendered.
type job struct {
	fetched
	// appName is the Application's instance name (reposerver.Request's
	// AppName), which a plugin is told.
	appName string
	opts    render.Options
	key     string
	// refOnly: the source only provides files to the others
	// (render.AppSource.RefOnly).
	refOnly bool
	// unservedValueFile is a value file of the source that comes from a
	// ref source that was not fetched: the source cannot be rendered.
	unservedValueFile string
	// unservedBase is a remote Kustomize base of the source the base
	// Fetcher does not serve: the source cannot be rendered.
	unservedBase *UnservedBaseError
	// bases are the remote Kustomize bases fetched for the source.
	bases []fetchedBase
}

// renders reports whether the job's source is rendered.
func (j *job) renders() bool {
	return !j.refOnly && !j.unserved && j.unservedValueFile == "" && j.unservedBase == nil
}

// resolve works out how to render each source of req from srcs, its
// checkouts: the source's Argo CD override files and options
// (render.SourceOptions), the cluster's capabilities for Helm, the
// dependencies a chart does not vendor, the remote bases of a Kustomize
// source, and the render key. Ref sources provide their checkouts to
// "$ref/path" value files; as in Argo CD, a later source with the same
// ref name wins. With partial, a remote base the base Fetcher does not
// serve marks its source (job.unservedBase) rather than failing.
func (s *Service) resolve(ctx context.Context, req *reposerver.Request, srcs []fetched, partial bool) ([]*job, error) {
	refs, unservedRefs := map[string]string{}, map[string]bool{}
	for _, f := range srcs {
		if ref := f.source.Ref; ref != "" {
			delete(refs, ref)
			delete(unservedRefs, ref)
			if f.unserved {
				unservedRefs[ref] = true
			} else {
				refs[ref] = f.checkout.Dir
			}
		}
	}
	info := render.AppInfo{Name: req.AppName, Namespace: req.Namespace, Project: req.Project, KubeVersion: req.KubeVersion, APIVersions: req.APIVersions}
	jobs := make([]*job, len(srcs))
	for i, f := range srcs {
		j := &job{fetched: f, appName: req.AppName}
		jobs[i] = j
		as := render.AppSource{Field: f.field, Source: f.source}
		if j.refOnly = as.RefOnly(len(srcs)); j.refOnly || f.unserved {
			continue
		}
		if j.unservedValueFile = valueFileFrom(f.source, unservedRefs); j.unservedValueFile != "" {
			continue
		}
		// Override files are read from the source's directory: a chart
		// source's is the chart's, whatever its path says.
		as, opts, err := render.SourceOptions(info, as, f.checkout.Dir, f.dir(), f.checkout.Revision, refs)
		if err != nil {
			return nil, err
		}
		// The cluster's capabilities change Helm renders only: other
		// sources keep their render key (and the engine its idle
		// comparisons) when the cluster's API versions change.
		kind, kindErr := render.DetectKind(f.checkout.Dir, f.dir(), opts)
		if kindErr == nil && kind != render.KindHelm && (kind != render.KindKustomize || !render.HelmEnabled(req.KustomizeBuildOptions)) {
			opts.Capabilities = nil
		}
		if kindErr == nil && kind == render.KindHelm && s.opts.Charts != nil {
			if opts.ChartDependencies, err = s.dependencies(ctx, f, chartOptions(req, as.Source)); err != nil {
				return nil, err
			}
		}
		if kindErr == nil && kind == render.KindKustomize {
			opts.KustomizeBuildOptions = req.KustomizeBuildOptions
			r, err := s.remoteBases(ctx, requestBases(req, f.field), f.checkout.Dir, f.dir(), opts)
			opts.RemoteBases, opts.RemoteFiles, opts.KustomizeCharts, j.bases = r.bases, r.files, r.charts, r.fetched
			var ub *UnservedBaseError
			if partial && errors.As(err, &ub) {
				j.unservedBase = ub
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		if j.key, err = renderKey(f, opts, srcs, j.bases); err != nil {
			return nil, fmt.Errorf("%s: %w", f.field, err)
		}
		j.opts = opts
	}
	return jobs, nil
}

// valueFileFrom returns the first Helm value file or file parameter of src
// that comes from the ref source of one of refs ("$name/path"), "" when
// none does.
func valueFileFrom(src v1alpha1.ApplicationSource, refs map[string]bool) string {
	if src.Helm == nil || len(refs) == 0 {
		return ""
	}
	files := slices.Clone(src.Helm.ValueFiles)
	for _, fp := range src.Helm.FileParameters {
		files = append(files, fp.Path)
	}
	for _, vf := range files {
		name, ok := strings.CutPrefix(vf, "$")
		if !ok {
			continue
		}
		if name, _, _ = strings.Cut(name, "/"); refs[name] {
			return vf
		}
	}
	return ""
}

// renderKey identifies a render: repository, commit, path and options, the
// repository and commit of every ref source (their files may be read as
// value files) and of every remote Kustomize base in place of their
// checkout directories, so that a base whose ref moved renders again.
func renderKey(f fetched, opts render.Options, srcs []fetched, bases []fetchedBase) (string, error) {
	opts.Refs, opts.RemoteBases, opts.RemoteFiles, opts.KustomizeCharts = nil, nil, nil, nil
	data, err := json.Marshal(opts)
	if err != nil {
		return "", fmt.Errorf("encode render options: %w", err)
	}
	h := sha256.New()
	for _, s := range []string{reposerver.NormalizeURL(f.source.RepoURL), f.source.Chart, f.checkout.Revision, path.Clean("/" + f.dir())} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(data)
	if opts.Helm != nil {
		for _, ref := range srcs {
			if ref.source.Ref != "" {
				fmt.Fprintf(h, "\x00%s\x00%s\x00%s", ref.source.Ref, reposerver.NormalizeURL(ref.source.RepoURL), ref.checkout.Revision)
			}
		}
	}
	for _, b := range bases {
		fmt.Fprintf(h, "\x00base\x00%s\x00%s\x00%s", b.entry, b.repoURL, b.revision)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
