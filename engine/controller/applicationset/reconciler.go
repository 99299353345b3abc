package applicationset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/engine/authority"
	"github.com/tollgate-dev/tollgate/policies"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// ControllerName names the ApplicationSet controller in logs and
// metrics.
const ControllerName = "tollgate-applicationset"

// DefaultConcurrency is how many ApplicationSets are generated at
// once: Argo CD's ApplicationSet controller's --concurrent-reconciliations.
const DefaultConcurrency = 10

// DefaultRequeue is how often an ApplicationSet is generated again
// when nothing asks sooner: Argo CD's default for git generators (their
// requeueAfterSeconds), and a bound on how long an ApplicationSet another
// replica stopped owning waits.
const DefaultRequeue = 3 * time.Minute

// Dependencies are what an Reconciler works with; all but
// Recorder and Shard are required.
type Dependencies struct {
	// Client reads ApplicationSets, Applications, AppProjects and the Argo
	// CD Secrets (from the manager's cache, see CacheOptions) and writes
	// Applications and ApplicationSet status.
	Client client.Client
	// APIReader reads what the cache may not hold yet (an AppProject just
	// created, the known hosts ConfigMap).
	APIReader client.Reader
	// Evaluator judges every generated Application.
	Evaluator authority.Evaluator
	// Generator runs the generators and templates: the repo-servers, or a
	// server.Service in this process.
	Generator reposerver.AppSetGenerator
	// Recorder records events on ApplicationSets; nil records none.
	Recorder EventRecorder
	// Shard, when set, limits the replica to the ApplicationSets it owns.
	Shard Sharder
}

// EventRecorder records Kubernetes events; the recorder of
// manager.GetEventRecorder implements it.
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Sharder tells a controller replica which ApplicationSets are its own
// when several replicas share them; *shard.Membership implements it.
type Sharder interface {
	// Owns reports whether this replica reconciles the object of key.
	Owns(key string) bool
}

// Options configure an Reconciler.
type Options struct {
	// Namespace is the control-plane namespace: its ApplicationSets are
	// always served, and it holds the AppProjects and Argo CD Secrets.
	Namespace string
	// Namespaces are the other namespaces whose ApplicationSets are
	// served (--applicationset-namespaces); their Applications must be
	// permitted there by their project's sourceNamespaces.
	Namespaces []string
	// ImplicitDefaultProject is the policy configuration's.
	ImplicitDefaultProject bool
	// ListingMaxAge is how old a repository's branch and tag listing may
	// be when a generation is not a refresh.
	ListingMaxAge time.Duration
	// Requeue is how often an ApplicationSet is generated again without
	// an event; DefaultRequeue when zero.
	Requeue time.Duration
	// Concurrency is how many ApplicationSets are reconciled at once, so
	// that one whose generation is slow (or stopped only by its limits)
	// holds up no other; DefaultConcurrency when zero.
	Concurrency int
	// SCMProvidersDisabled refuses pull request and SCM provider
	// generators (--enable-scm-providers=false).
	SCMProvidersDisabled bool
	// AllowedSCMProviders are the API URLs a pull request or SCM provider
	// generator may name (--allowed-scm-providers); empty allows every one.
	AllowedSCMProviders []string
	// ProgressiveSyncs runs the RollingSync strategy (Argo CD's
	// --enable-progressive-syncs); without it a strategy is ignored and
	// every Application is written at once (see progressive.go).
	ProgressiveSyncs bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Reconciler runs Argo CD's ApplicationSets: it generates each
// one's Applications (in a repo-server: the templates and the Git files
// are tenant input), judges every generated Application with the policies
// at the applicationset enforcement point, and creates, updates and
// deletes the Applications as Argo CD's ApplicationSet controller does.
// An Application the gate denies is not written; the ApplicationSet's
// conditions say which, by which rule and from which parameters, and its
// earlier version stays as it was.
type Reconciler struct {
	deps Dependencies
	opts Options
}

// New returns an Reconciler.
func New(deps Dependencies, opts Options) (*Reconciler, error) {
	if deps.Client == nil || deps.APIReader == nil || deps.Evaluator == nil || deps.Generator == nil {
		return nil, errors.New("new applicationset reconciler: client, API reader, evaluator and generator are required")
	}
	if opts.Namespace == "" {
		opts.Namespace = policies.DefaultArgoCDNamespace
	}
	if opts.Requeue <= 0 {
		opts.Requeue = DefaultRequeue
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Reconciler{deps: deps, opts: opts}, nil
}

// served reports whether the ApplicationSets of namespace are served.
func (r *Reconciler) served(namespace string) bool {
	return namespace == r.opts.Namespace || slices.Contains(r.opts.Namespaces, namespace)
}

// SetupWithManager registers the controller: it watches ApplicationSets
// (spec, annotation and label changes), the Applications they own (spec,
// metadata, sync and health changes), the Argo CD cluster Secrets and the
// AppProjects (both enqueue every ApplicationSet).
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	served := predicate.NewPredicateFuncs(func(o client.Object) bool { return r.served(o.GetNamespace()) })
	inControl := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == r.opts.Namespace })
	all := handler.EnqueueRequestsFromMapFunc(r.everyApplicationSet)
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.ApplicationSet{}, builder.WithPredicates(served,
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&v1alpha1.Application{}, builder.WithPredicates(served, generatedApplicationChanged(r.opts.ProgressiveSyncs))).
		Watches(&corev1.Secret{}, all, builder.WithPredicates(inControl, predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[reposerver.SecretTypeLabel] == reposerver.SecretTypeCluster
		}))).
		Watches(&v1alpha1.AppProject{}, all, builder.WithPredicates(inControl, argocd.ProjectChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Concurrency}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up applicationset controller: %w", err)
	}
	return nil
}

// everyApplicationSet maps an event to every ApplicationSet served.
func (r *Reconciler) everyApplicationSet(ctx context.Context, _ client.Object) []reconcile.Request {
	var sets v1alpha1.ApplicationSetList
	if err := r.deps.Client.List(ctx, &sets); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list applicationsets")
		return nil
	}
	var out []reconcile.Request
	for _, s := range sets.Items {
		if r.served(s.Namespace) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return out
}

// generatedApplicationChanged passes the events of a generated
// Application that change what its ApplicationSet writes or reports:
// creation, deletion, and changes of its spec, labels, annotations,
// finalizers, sync or health status, and with progressive syncs its
// operation's phase and start (which move a rollout on).
func generatedApplicationChanged(progressive bool) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*v1alpha1.Application)
			n, ok2 := e.ObjectNew.(*v1alpha1.Application)
			if !ok1 || !ok2 {
				return true
			}
			return !equality.Semantic.DeepEqual(o.Spec, n.Spec) ||
				!equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
				!equality.Semantic.DeepEqual(o.Annotations, n.Annotations) ||
				!equality.Semantic.DeepEqual(o.Finalizers, n.Finalizers) ||
				!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
				o.Status.Sync.Status != n.Status.Sync.Status ||
				o.Status.Health.Status != n.Status.Health.Status ||
				progressive && operationChanged(o.Status.OperationState, n.Status.OperationState)
		},
	}
}

// Reconcile generates one ApplicationSet's Applications, judges them and
// writes those allowed; see Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if !r.served(req.Namespace) {
		return reconcile.Result{}, nil
	}
	if r.deps.Shard != nil && !r.deps.Shard.Owns(appSetShardKey(req.NamespacedName)) {
		return reconcile.Result{RequeueAfter: r.opts.Requeue}, nil
	}
	var set v1alpha1.ApplicationSet
	if err := r.deps.Client.Get(ctx, req.NamespacedName, &set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !set.DeletionTimestamp.IsZero() {
		// The garbage collector deletes the Applications it still owns
		// (their finalizers then delete their resources, or not).
		requeue, err := r.release(ctx, &set)
		return reconcile.Result{RequeueAfter: requeue}, err
	}
	refresh := set.Annotations[v1alpha1.AnnotationApplicationSetRefresh] != ""
	p := &appSetPass{set: &set, now: r.opts.Now()}
	requeue := r.requeueAfter(&set)
	err := r.generate(ctx, p, refresh)
	if err == nil {
		err = r.progress(ctx, p)
	}
	if err == nil {
		err = r.write(ctx, p)
	}
	if err == nil {
		err = r.syncPending(ctx, p)
	}
	if err != nil && p.reason == "" {
		// An error of the API server (reading a project, listing
		// Applications) is reported too, and retried with backoff.
		_ = p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, err)
	}
	// A status that finds no ApplicationSet: it was deleted meanwhile.
	if serr := r.writeStatus(ctx, p); serr != nil && !apierrors.IsNotFound(serr) {
		err = errors.Join(err, serr)
	}
	if refresh && err == nil {
		patch := client.MergeFrom(set.DeepCopy())
		delete(set.Annotations, v1alpha1.AnnotationApplicationSetRefresh)
		if perr := r.deps.Client.Patch(ctx, &set, patch); perr != nil && !apierrors.IsNotFound(perr) {
			err = perr
		}
	}
	if p.rollout != nil && p.rollout.again {
		requeue = min(requeue, time.Second)
	}
	switch {
	case err == nil:
		return reconcile.Result{RequeueAfter: requeue}, nil
	case errors.Is(err, errAppSetReported):
		log.V(1).Info("ApplicationSet not reconciled", "error", err.Error())
		return reconcile.Result{RequeueAfter: requeue}, nil
	}
	return reconcile.Result{}, err
}

// appSetShardKey is the key an ApplicationSet is sharded by: apart from
// the Applications' (namespace/name) so that an ApplicationSet and an
// Application of one name may go to different replicas.
func appSetShardKey(key types.NamespacedName) string {
	return "ApplicationSet/" + key.String()
}

// errAppSetReported is an error already reported in the ApplicationSet's
// conditions: it is retried after the requeue interval, not with backoff.
var errAppSetReported = errors.New("reported in the applicationset's conditions")

// requeueAfter is when set is generated again without an event: the
// shortest requeueAfterSeconds of its git and clusterDecisionResource
// generators (3 minutes unset) and pull request, SCM provider and plugin
// generators (30 minutes unset), nested ones included, as Argo CD. Git generators never lengthen
// Options.Requeue; with a generator that asks a rate-limited API, the
// generators' own interval holds.
func (r *Reconciler) requeueAfter(set *v1alpha1.ApplicationSet) time.Duration {
	var shortest time.Duration // of the generators that poll
	asksAPI := false
	walkGenerators(set, func(kind string, g map[string]any) {
		var d time.Duration
		switch kind {
		case "git", "clusterDecisionResource":
			d = DefaultRequeue
		case "pullRequest", "scmProvider":
			d, asksAPI = DefaultSCMRequeue, true
		case "plugin":
			d, asksAPI = DefaultPluginRequeue, true
		default:
			return
		}
		if s, ok := g["requeueAfterSeconds"].(float64); ok && s > 0 {
			d = time.Duration(s) * time.Second
		}
		if shortest == 0 || d < shortest {
			shortest = d
		}
	})
	if !asksAPI && (shortest == 0 || r.opts.Requeue < shortest) {
		return r.opts.Requeue
	}
	return shortest
}

// walkGenerators calls fn with every generator of set, nested matrix and
// merge children included, as decoded JSON (appset.WalkGenerators).
func walkGenerators(set *v1alpha1.ApplicationSet, fn func(kind string, g map[string]any)) {
	set.WalkGenerators(func(_, kind string, g map[string]any) { fn(kind, g) })
}

// generate asks the generator for set's Applications, giving it the
// cluster Secrets (without credentials) and, once the git generators'
// repositories are judged permitted (reposerver.GitAccess), their credentials
// as a source of the template's project gets them. A git generator whose
// repository is not permitted fails the generation before anything is
// asked or read.
func (r *Reconciler) generate(ctx context.Context, p *appSetPass, refresh bool) error {
	secrets, err := argocd.ListSecrets(ctx, r.deps.Client, r.opts.Namespace)
	if err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, err)
	}
	p.clusters = reposerver.ClusterSecretsForGeneration(secrets)
	req := &reposerver.AppSetRequest{
		ApplicationSet: *p.set.DeepCopy(),
		Clusters:       p.clusters,
		ListingMaxAge:  r.opts.ListingMaxAge,
	}
	if refresh {
		req.ListingMaxAge = 0
	}
	access, err := r.gitAccess(ctx, p.set)
	if err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, err)
	}
	if err := reposerver.CheckGitGenerators(ctx, p.set, access); err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, err)
	}
	req.Access = access
	if req.SCM, err = r.scmAccess(ctx, p.set); err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, err)
	}
	if err := r.generatorInputs(ctx, p.set, req); err != nil {
		return p.fail(v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError, err)
	}
	// Credentials are matched as for an Application of the template's
	// project; a templated project (Project "") matches only the
	// credentials of every project. A repoURL rendered from parameters
	// gets none.
	creds := &argocd.Credentials{Reader: r.deps.APIReader, Namespace: r.opts.Namespace, Secrets: secrets}
	var credErr error
	walkGenerators(p.set, func(kind string, g map[string]any) {
		repoURL, _ := g["repoURL"].(string)
		if kind != "git" || repoURL == "" || strings.Contains(repoURL, "{{") || credErr != nil {
			return
		}
		var c reposerver.Credentials
		if c, credErr = creds.For(ctx, repoURL, access.Project); credErr != nil {
			return
		}
		if req.Credentials == nil {
			req.Credentials = map[string]reposerver.Credentials{}
		}
		req.Credentials[reposerver.NormalizeURL(repoURL)] = c
	})
	if credErr != nil {
		return p.fail(v1alpha1.ApplicationSetReasonErrorOccurred, credErr)
	}
	resp, err := r.deps.Generator.GenerateApplications(ctx, req)
	if err != nil {
		// A generation stopped by a limit of the sandbox (time, memory,
		// output) is an ErrorOccurred whose message names the limit.
		reason := v1alpha1.ApplicationSetReasonApplicationGenerationFromParamsError
		var we *reposerver.Error
		switch {
		case errors.As(err, &we) && we.Code == reposerver.CodeLimit:
			reason = v1alpha1.ApplicationSetReasonErrorOccurred
		case we != nil && we.Reason != "":
			reason = we.Reason
		}
		return p.fail(reason, err)
	}
	gen, refused := reposerver.WithoutDuplicates(p.set.Name, resp.Applications)
	p.generated = true
	for _, err := range refused {
		p.invalid = append(p.invalid, err.Error())
	}
	// Every name generated, refused ones included: none of them is
	// deleted as no longer generated.
	p.names = map[string]bool{}
	for _, g := range resp.Applications {
		if name, ok := nestedName(g.Application); ok {
			p.names[name] = true
		}
	}
	for _, g := range gen {
		if err := r.admit(ctx, p, g); err != nil {
			return err
		}
	}
	return nil
}

// gitAccess decides what set's git generators may read: nil without a
// git generator, otherwise with the template's project (read past the
// cache when the cache lacks it) or, when it depends on parameters, every
// AppProject of the control namespace.
func (r *Reconciler) gitAccess(ctx context.Context, set *v1alpha1.ApplicationSet) (*reposerver.GitAccess, error) {
	hasGit := false
	walkGenerators(set, func(kind string, _ map[string]any) { hasGit = hasGit || kind == "git" })
	if !hasGit {
		return nil, nil
	}
	var projects []v1alpha1.AppProject
	if name, templated := set.TemplateProject(); !templated {
		proj, err := r.project(ctx, name)
		if err != nil {
			return nil, err
		}
		if proj != nil {
			projects = append(projects, *proj)
		}
	} else {
		var list v1alpha1.AppProjectList
		if err := r.deps.Client.List(ctx, &list, client.InNamespace(r.opts.Namespace)); err != nil {
			return nil, fmt.Errorf("list appprojects: %w", err)
		}
		projects = list.Items
	}
	return reposerver.NewGitAccess(set, r.opts.Namespace, projects), nil
}

// nestedName is the metadata.name of a generated Application.
func nestedName(app map[string]any) (string, bool) {
	md, _ := app["metadata"].(map[string]any)
	name, ok := md["name"].(string)
	return name, ok && name != ""
}
