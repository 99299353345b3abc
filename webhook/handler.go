package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// Evaluator judges one Input; *policies.Evaluator implements it. It must be
// safe for concurrent use.
type Evaluator interface {
	Evaluate(ctx context.Context, in policies.Input) (policies.Decision, error)
}

// DefaultTimeout bounds the handling of one request (cache lookups and every
// evaluation) unless Options.Timeout says otherwise. Keep it below the
// webhook's timeoutSeconds so that the webhook answers before the API server
// gives up.
const DefaultTimeout = 4 * time.Second

// DefaultMaxProjectWarnings is how many Applications an AppProject change
// warns about one by one before summarizing the rest (the API server
// truncates long warning lists).
const DefaultMaxProjectWarnings = 20

// Options configures NewHandler.
type Options struct {
	// Config is the webhook configuration. It must match the Config the
	// Evaluator was built with (Argo CD namespace, rule severities).
	Config Config
	// Evaluator judges the Inputs. Required.
	Evaluator Evaluator
	// Reader reads Applications and AppProjects as v1alpha1 types (its
	// scheme registers v1alpha1): a manager's informer cache, never a live
	// client, with Applications indexed by IndexApplications. Required.
	Reader client.Reader
	// APIReader, when set, reads an AppProject the cache does not hold
	// (yet) from the API server: an Application applied together with its
	// AppProject is then judged with the project rather than as
	// project-not-found.
	APIReader client.Reader
	// Namespace is the webhook's own namespace; it is always exempt, so the
	// webhook never blocks its own certificate Secret.
	Namespace string
	// Metrics records requests and violations; nil means fresh,
	// unregistered collectors.
	Metrics *Metrics
	// Timeout bounds one request; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxProjectWarnings bounds the per-Application warnings of an
	// AppProject change; zero means DefaultMaxProjectWarnings.
	MaxProjectWarnings int
}

// DefaultOptions returns Options with DefaultConfig, DefaultTimeout and
// DefaultMaxProjectWarnings; Evaluator and Reader are left to the caller.
func DefaultOptions() Options {
	return Options{
		Config:             DefaultConfig(),
		Timeout:            DefaultTimeout,
		MaxProjectWarnings: DefaultMaxProjectWarnings,
	}
}

// Handler is the validating admission handler. It is safe for concurrent
// use; SetEvaluator swaps the policies without a restart.
type Handler struct {
	cfg                Config
	mode               Mode
	argocdNS           string
	reader             client.Reader
	apiReader          client.Reader
	metrics            *Metrics
	timeout            time.Duration
	maxProjectWarnings int

	exemptNamespaces map[string]bool
	exemptUsers      map[string]bool
	exemptGroups     map[string]bool
	syncUsers        map[string]bool
	controllerUsers  map[string]bool

	eval atomic.Pointer[evaluatorBox]
	maps objectMaps
}

// evaluatorBox lets an interface value live in an atomic.Pointer.
type evaluatorBox struct{ Evaluator }

// Handler is served only through NewHTTPHandler, which turns its errors
// into HTTP 500; it is deliberately not an admission.Handler.
var _ Decider = (*Handler)(nil)

// NewHandler returns a Handler. The configuration is validated; Evaluator
// and Reader are required.
func NewHandler(opts Options) (*Handler, error) {
	if opts.Evaluator == nil {
		return nil, errors.New("create webhook handler: no evaluator")
	}
	if opts.Reader == nil {
		return nil, errors.New("create webhook handler: no cache reader")
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("create webhook handler: %w", err)
	}
	h := &Handler{
		cfg:                opts.Config,
		mode:               opts.Config.mode(),
		argocdNS:           opts.Config.ArgoCDNamespaceOrDefault(),
		reader:             opts.Reader,
		apiReader:          opts.APIReader,
		metrics:            opts.Metrics,
		timeout:            opts.Timeout,
		maxProjectWarnings: opts.MaxProjectWarnings,
		exemptNamespaces:   set(opts.Config.ExemptNamespaces),
		exemptUsers:        set(opts.Config.ExemptUsers),
		exemptGroups:       set(opts.Config.ExemptGroups),
		syncUsers:          set(opts.Config.SyncUsers),
		controllerUsers:    set(opts.Config.ControllerUsers),
	}
	if opts.Config.SyncUsers == nil {
		h.syncUsers = set(DefaultSyncUsers(opts.Config.TollgateNamespaceOrDefault(), h.argocdNS))
	}
	if opts.Config.ControllerUsers == nil {
		h.controllerUsers = set(DefaultControllerUsers(opts.Config.TollgateNamespaceOrDefault()))
	}
	if opts.Namespace != "" {
		h.exemptNamespaces[opts.Namespace] = true
	}
	if h.metrics == nil {
		h.metrics = NewMetrics()
	}
	if h.timeout <= 0 {
		h.timeout = DefaultTimeout
	}
	if h.maxProjectWarnings <= 0 {
		h.maxProjectWarnings = DefaultMaxProjectWarnings
	}
	h.SetEvaluator(opts.Evaluator)
	return h, nil
}

// SetEvaluator atomically replaces the evaluator, e.g. after the policies
// were reloaded. Requests in flight finish with the previous one. A nil
// evaluator is ignored.
func (h *Handler) SetEvaluator(e Evaluator) {
	if e != nil {
		h.eval.Store(&evaluatorBox{e})
	}
}

// evaluator returns the current evaluator.
func (h *Handler) evaluator() Evaluator { return h.eval.Load().Evaluator }

// Decide decides one admission request: see the package documentation for
// the flow. It never panics. It returns an error when the request could
// not be decided (a failed evaluation or cache lookup, or a panic) in
// enforce mode; the Response is then empty, and NewHTTPHandler answers
// HTTP 500 so that the API server applies the failurePolicy. In audit mode
// such a request is allowed with a warning instead. A malformed object is
// a rejection (an error Response with code 400), not an error. Each request
// is logged and counted once, error or not.
func (h *Handler) Decide(ctx context.Context, req admission.Request) (admission.Response, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	out := h.routeSafely(ctx, req)
	h.record(ctx, req, out, time.Since(start))
	return h.respond(out)
}

// routeSafely is route with panics turned into errors.
func (h *Handler) routeSafely(ctx context.Context, req admission.Request) (out outcome) {
	defer func() {
		if r := recover(); r != nil {
			h.metrics.evaluationErrors.Inc()
			out = failed(http.StatusInternalServerError, fmt.Errorf("handle admission request: panic: %v", r))
		}
	}()
	return h.route(ctx, req)
}

// route sends a request to the review that applies.
func (h *Handler) route(ctx context.Context, req admission.Request) outcome {
	switch {
	case req.Operation == admissionv1.Connect:
		return skipped("CONNECT is not judged")
	case req.SubResource != "" && !ephemeralContainersRequest(req):
		return skipped("sub-resource " + req.SubResource + " is not judged")
	case neverJudged(req):
		return skipped(kindOf(req) + " is never judged")
	}
	if why := h.exemption(req); why != "" {
		return outcome{decision: DecisionExempt, note: why}
	}
	argo := req.Kind.Group == v1alpha1.Group
	if argo && req.Kind.Kind == v1alpha1.AppProjectKind {
		return h.reviewProject(ctx, req)
	}
	switch {
	case req.Operation == admissionv1.Delete:
		return skipped("DELETE is not judged")
	case req.SubResource != "":
		return h.reviewEphemeralContainers(ctx, req)
	}
	obj, old, out, ok := h.objectToJudge(req)
	if !ok {
		return out
	}
	if argo && req.Kind.Kind == v1alpha1.ApplicationKind {
		return h.reviewApplication(ctx, req, old, obj)
	}
	return h.reviewObject(ctx, req, obj)
}

// exemption says why the request is exempt, or "" when it is not.
func (h *Handler) exemption(req admission.Request) string {
	if h.exemptUsers[req.UserInfo.Username] {
		return "exempt user"
	}
	for _, g := range req.UserInfo.Groups {
		if h.exemptGroups[g] {
			return "exempt group " + g
		}
	}
	if req.Namespace != "" && h.exemptNamespaces[req.Namespace] {
		return "exempt namespace"
	}
	return ""
}

// objectToJudge decodes the new object of a CREATE or UPDATE, and the old
// one of an UPDATE. ok is false when there is nothing to judge; out then
// says why (a skipped UPDATE or a malformed object).
func (h *Handler) objectToJudge(req admission.Request) (obj, old map[string]any, out outcome, ok bool) {
	obj, err := decodeObject(req.Object)
	if err != nil {
		return nil, nil, failed(http.StatusBadRequest, fmt.Errorf("read request object: %w", err)), false
	}
	completeObject(obj, req)
	if req.Operation != admissionv1.Update {
		return obj, nil, outcome{}, true
	}
	if beingDeleted(obj) {
		return nil, nil, skipped("object is being deleted"), false
	}
	if old, err = decodeObject(req.OldObject); err == nil && onlyMetadataOrStatus(old, obj) && !h.authorityChanged(req, old, obj) {
		return nil, nil, skipped("only metadata or status changed"), false
	}
	return obj, old, outcome{}, true
}

// authorityChanged reports whether an UPDATE of metadata changes something
// a rule judges: an AppProject's exemption annotation, which exempts the
// project's Applications and all they render, or its tracking metadata;
// an Application's reserved annotations, written by anyone but the
// controller. An object's other metadata changes nothing a rule judged
// before.
func (h *Handler) authorityChanged(req admission.Request, oldObj, newObj map[string]any) bool {
	if len(h.reservedWrites(req, oldObj, newObj)) > 0 {
		return true
	}
	if stringAt(newObj, "kind") != "AppProject" {
		return false
	}
	for _, path := range [][]string{
		{"metadata", "annotations", h.cfg.ExemptAnnotationOrDefault()},
		{"metadata", "annotations", TrackingIDAnnotation},
		{"metadata", "labels", InstanceLabel},
	} {
		if stringAt(oldObj, path...) != stringAt(newObj, path...) {
			return true
		}
	}
	return false
}

// reservedWrites returns the reserved annotations (the controller's
// operation fence) a request adds, changes or removes on an Application,
// unless the controller makes it; old is nil for a CREATE. Only the
// controller may write them: set by anyone else, the fence pauses another
// replica's work on the Application, and removed, lets a second replica
// start an operation that is still running.
func (h *Handler) reservedWrites(req admission.Request, old, obj map[string]any) []string {
	if h.controllerUsers[req.UserInfo.Username] {
		return nil
	}
	return policies.ReservedAnnotationChanges(old, obj)
}

// reviewApplication judges an Application with its AppProject. The rules
// judge obj as sent (it is the Input's Object and its Application); its
// typed form only names the project. Its reserved annotations are judged
// by what the request writes (old is nil for a CREATE): an UPDATE that
// keeps the controller's fence is not denied for it.
func (h *Handler) reviewApplication(ctx context.Context, req admission.Request, old, obj map[string]any) outcome {
	app, err := decodeAs[v1alpha1.Application](obj)
	if err != nil {
		return failed(http.StatusBadRequest, fmt.Errorf("read request object: decode Application: %w", err))
	}
	proj, err := h.getProject(ctx, app.ProjectName())
	if err != nil {
		return h.lookupFailed(err)
	}
	in, err := h.input(req, obj, nil, proj)
	if err != nil {
		return h.lookupFailed(err)
	}
	in.Context.ReservedAnnotations = h.reservedWrites(req, old, obj)
	return h.judge(ctx, in)
}

// reviewObject judges any other object, with the Application that owns it
// and that Application's AppProject when there is one. An object of a kind
// no rule judges on its own (judgedKinds) and that no Application owns is
// allowed without judging.
func (h *Handler) reviewObject(ctx context.Context, req admission.Request, obj map[string]any) outcome {
	app, proj, err := h.ownerAndProject(ctx, obj, clusterScoped(req, obj))
	if err != nil {
		return h.lookupFailed(err)
	}
	if app == nil && !judgedKind(req) {
		return skipped(kindOf(req) + " is judged only when an Application tracks it")
	}
	in, err := h.input(req, obj, app, proj)
	if err != nil {
		return h.lookupFailed(err)
	}
	return h.judge(ctx, h.claimed(req, in))
}

// ownerAndProject returns the Application that owns obj by its tracking
// metadata (see owner) and that Application's AppProject; nil for what
// does not exist.
func (h *Handler) ownerAndProject(ctx context.Context, obj map[string]any, clusterScoped bool) (*v1alpha1.Application, *v1alpha1.AppProject, error) {
	app, err := h.owner(ctx, obj, clusterScoped)
	if err != nil || app == nil {
		return nil, nil, err
	}
	proj, err := h.getProject(ctx, app.ProjectName())
	if err != nil {
		return nil, nil, err
	}
	return app, proj, nil
}

// claimed marks the Application of in as claimed when the request's user
// is not a sync engine: tracking metadata is written by whoever writes the
// object, so it subjects the object to the project's rules but lends it
// none of the project's exemptions.
func (h *Handler) claimed(req admission.Request, in policies.Input) policies.Input {
	if in.Application != nil && !h.syncUsers[req.UserInfo.Username] {
		in.Context.ClaimedApplication = true
	}
	return in
}

// judge evaluates in and turns the decision into an outcome.
func (h *Handler) judge(ctx context.Context, in policies.Input) outcome {
	dec, err := h.evaluator().Evaluate(ctx, in)
	if err != nil {
		h.metrics.evaluationErrors.Inc()
		return failed(http.StatusInternalServerError, err)
	}
	return h.verdict(dec)
}

// lookupFailed is the outcome of a failed cache read, or of an Application
// or AppProject read that could not be turned into Rego input.
func (h *Handler) lookupFailed(err error) outcome {
	h.metrics.evaluationErrors.Inc()
	return failed(http.StatusInternalServerError, err)
}

// kindOf names the request's kind for messages: "apps/Deployment", or
// "Secret" for the core group.
func kindOf(req admission.Request) string {
	if req.Kind.Group == "" {
		return req.Kind.Kind
	}
	return req.Kind.Group + "/" + req.Kind.Kind
}

// set turns a list into a set.
func set(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}
