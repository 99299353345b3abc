package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/webhook"
)

// Reviewer judges one stored object; *webhook.Handler implements it.
type Reviewer interface {
	Review(ctx context.Context, obj map[string]any, clusterScoped bool) (webhook.StoredReview, error)
}

// DefaultChunkSize is how many objects one list page holds unless
// Options.ChunkSize says otherwise.
const DefaultChunkSize = 500

// DefaultMaxReportResults bounds the results one PolicyReport lists unless
// Options.MaxReportResults says otherwise: an object in etcd holds at most
// about 1.5 MiB. The summary still counts every result.
const DefaultMaxReportResults = 1000

// Options configures New.
type Options struct {
	// Client lists the objects (unstructured, paged) and writes the
	// reports. Required.
	Client client.Client
	// Discovery lists the resource types. Required.
	Discovery discovery.DiscoveryInterface
	// Reviewer judges each object. Required.
	Reviewer Reviewer
	// WebhookConfigName is the ValidatingWebhookConfiguration whose
	// namespaceSelectors exclude namespaces; "" or absent excludes none.
	WebhookConfigName string
	// ChunkSize is the page size of each list; zero means
	// DefaultChunkSize.
	ChunkSize int64
	// WriteReports writes PolicyReports and ClusterPolicyReports.
	WriteReports bool
	// MaxReportResults bounds the results of one report; zero means
	// DefaultMaxReportResults.
	MaxReportResults int
	// KeepFindings keeps every object with violations in
	// Result.Findings (the CLI's report); without it a run holds only
	// what its reports list.
	KeepFindings bool
	// Metrics records each run; nil records nothing.
	Metrics *Metrics
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Auditor runs audits. It is safe for one Run at a time.
type Auditor struct {
	opts Options
}

// New returns an Auditor.
func New(opts Options) (*Auditor, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("create auditor: no client")
	case opts.Discovery == nil:
		return nil, errors.New("create auditor: no discovery client")
	case opts.Reviewer == nil:
		return nil, errors.New("create auditor: no reviewer")
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	if opts.MaxReportResults <= 0 {
		opts.MaxReportResults = DefaultMaxReportResults
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Auditor{opts: opts}, nil
}

// ObjectRef identifies an audited object.
type ObjectRef struct {
	APIVersion, Kind, Resource, Namespace, Name string
	UID                                         string
}

// Path is the object's API path without the leading slash, e.g.
// "apis/apps/v1/namespaces/shop/deployments/web" ("apis/apps/v1/deployments"
// for a kind): what a report names as the object's file; "" without a
// resource.
func (r ObjectRef) Path() string {
	if r.Resource == "" {
		return ""
	}
	gv, _ := schema.ParseGroupVersion(r.APIVersion)
	p := "api/" + gv.Version
	if gv.Group != "" {
		p = "apis/" + gv.Group + "/" + gv.Version
	}
	if r.Namespace != "" {
		p += "/namespaces/" + r.Namespace
	}
	p += "/" + r.Resource
	if r.Name != "" {
		p += "/" + r.Name
	}
	return p
}

// Finding is an object with violations.
type Finding struct {
	Object     ObjectRef
	Violations []policies.Violation
}

// Failure is an object that could not be judged, or a kind that could not
// be listed (Object.Name empty).
type Failure struct {
	Object ObjectRef
	Err    error
}

// Result is the outcome of one run.
type Result struct {
	// Started is when the run started; the reports' timestamps.
	Started time.Time
	// Duration is how long it took.
	Duration time.Duration
	// Judged counts the objects judged, Skipped those that were not
	// (exempt, excluded, derived, or of a kind judged only when tracked).
	Judged, Skipped int
	// Findings are the objects with violations, sorted by namespace,
	// kind and name (with Options.KeepFindings).
	Findings []Finding
	// Failures are what could not be listed or judged.
	Failures []Failure
	// Reports says what was written: "" when WriteReports is off, else a
	// short note (how many reports, or why none could be).
	Reports string
	// NoReportCRDs is set when the reports could not be written because
	// their CRDs are not installed.
	NoReportCRDs bool
}

// Run audits the cluster once and, with WriteReports, writes the reports.
// It returns an error only when nothing could be audited (discovery or the
// namespaces failed) or ctx ended; objects and kinds that fail are in
// Result.Failures.
func (a *Auditor) Run(ctx context.Context) (*Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	res := &Result{Started: a.opts.Now()}
	excluded, err := a.excludedNamespaces(ctx)
	if err != nil {
		a.opts.Metrics.failed()
		return nil, err
	}
	kinds, err := a.kinds()
	if err != nil {
		a.opts.Metrics.failed()
		return nil, err
	}
	tally := newTally()
	for _, k := range kinds {
		if err := a.auditKind(ctx, k, excluded, res, tally); err != nil {
			if ctx.Err() != nil {
				a.opts.Metrics.failed()
				return nil, ctx.Err()
			}
			// The ClusterPolicyReport says so: the namespaces' reports
			// lack this kind's results, which were not fixed.
			ref := ObjectRef{APIVersion: k.gvk.GroupVersion().String(), Kind: k.gvk.Kind, Resource: k.resource}
			res.Failures = append(res.Failures, Failure{Object: ref, Err: err})
			tally.failed(ref, err)
		}
	}
	slices.SortFunc(res.Findings, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(x.Object.Namespace, y.Object.Namespace), cmp.Compare(x.Object.Kind, y.Object.Kind), cmp.Compare(x.Object.Name, y.Object.Name))
	})
	if a.opts.WriteReports {
		res.Reports = a.writeReports(ctx, res, tally)
	}
	res.Duration = a.opts.Now().Sub(res.Started)
	a.opts.Metrics.observe(res, tally)
	log.Info("Audit done", "judged", res.Judged, "skipped", res.Skipped, "violations", tally.violations(),
		"failures", len(res.Failures), "reports", res.Reports, "duration", res.Duration.String())
	return res, nil
}

// auditKind lists one kind in pages and judges each object.
func (a *Auditor) auditKind(ctx context.Context, k kind, excluded map[string]bool, res *Result, tally *tally) error {
	// A list whose continue token expired starts over; what the kind
	// found so far is dropped first, so nothing is counted twice.
	const attempts = 3
	for attempt := 1; ; attempt++ {
		kr := &Result{}
		kt := newTally()
		err := a.listPages(ctx, k, func(obj map[string]any) {
			a.judge(ctx, k, obj, excluded, kr, kt)
		})
		if isExpired(err) && attempt < attempts {
			continue
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", k.resource, err)
		}
		res.Judged += kr.Judged
		res.Skipped += kr.Skipped
		res.Findings = append(res.Findings, kr.Findings...)
		res.Failures = append(res.Failures, kr.Failures...)
		tally.merge(kt)
		return nil
	}
}

// judge reviews one object and records the outcome in res and t.
func (a *Auditor) judge(ctx context.Context, k kind, obj map[string]any, excluded map[string]bool, res *Result, t *tally) {
	ref := refOf(k, obj)
	if ref.Namespace != "" && excluded[ref.Namespace] {
		res.Skipped++
		return
	}
	rv, err := a.opts.Reviewer.Review(ctx, obj, !k.namespaced)
	switch {
	case err != nil:
		res.Failures = append(res.Failures, Failure{Object: ref, Err: err})
		t.failed(ref, err)
	case rv.Skipped != "":
		res.Skipped++
	default:
		res.Judged++
		t.judged(ref, rv.Decision.Violations)
		if a.opts.KeepFindings && len(rv.Decision.Violations) > 0 {
			res.Findings = append(res.Findings, Finding{Object: ref, Violations: rv.Decision.Violations})
		}
	}
}

// refOf identifies obj, of kind k.
func refOf(k kind, obj map[string]any) ObjectRef {
	md, _ := obj["metadata"].(map[string]any)
	str := func(key string) string { s, _ := md[key].(string); return s }
	return ObjectRef{
		APIVersion: k.gvk.GroupVersion().String(), Kind: k.gvk.Kind, Resource: k.resource,
		Namespace: str("namespace"), Name: str("name"), UID: str("uid"),
	}
}
