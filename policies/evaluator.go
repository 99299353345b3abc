package policies

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// library holds the built-in Rego rules and their tests; the tests are never
// compiled into the product policy set.
//
//go:embed library/*.rego
var library embed.FS

// libraryDir is the directory of the built-in rules inside library.
const libraryDir = "library"

// DefaultTimeout bounds one Evaluate call unless Options.Timeout says
// otherwise.
const DefaultTimeout = 2 * time.Second

// builtinQuery collects every built-in violation together with the name of
// the package that produced it. The Evaluator runs it specialised by kind
// (evaluator_kinds.go).
const builtinQuery = "data.tollgate.builtin[pkg].violation[v]"

// Check is a native Go check the caller wires into the Evaluator, e.g. typed
// SealedSecret validation. Its violations go through the same severity
// overrides and exemptions as Rego ones; an empty Severity means the
// default declared in Options.CheckRules or the built-in table, else deny;
// an empty Object means the Input's object. A Check must be safe for
// concurrent use and must not modify the Input.
type Check func(Input) []Violation

// Options configures New.
type Options struct {
	// Builtin enables the embedded built-in rules.
	Builtin bool
	// PolicyDirs are directories (or single files) of user Rego policies,
	// read recursively: every *.rego file except *_test.rego.
	PolicyDirs []string
	// Namespaces restricts user policies to these packages (e.g. "main",
	// "kubernetes.security"). Empty means every package that defines deny,
	// warn or violation rules.
	Namespaces []string
	// Config holds severity overrides, the exemption annotation and the
	// Argo CD namespace.
	Config Config
	// Timeout bounds each Evaluate call; zero or negative means
	// DefaultTimeout.
	Timeout time.Duration
	// Checks are native Go checks run on every Input after the Rego rules.
	Checks []Check
	// CheckRules declares the rule ids the Checks report, with their
	// default severities, so Config can override them and a violation with
	// an empty Severity gets the declared default.
	CheckRules []RuleInfo
	// AllowNetwork lets user policies call OPA's builtins that reach the
	// network or the process (http.send, net.*, opa.runtime); without it a
	// policy that calls one does not compile.
	AllowNetwork bool
}

// DefaultOptions returns the options of a stock evaluator: built-in rules
// on, no user policies, DefaultTimeout.
func DefaultOptions() Options {
	return Options{
		Builtin: true,
		Timeout: DefaultTimeout,
	}
}

// Evaluator judges Inputs against the built-in rules, the user's policies
// and native checks. It is immutable after New (but for a cache of the
// built-in library's pure function results, see evaluator_cache.go, and
// caches of converted Applications, AppProjects and review contexts, see
// evaluator_input_cache.go) and safe for concurrent use.
type Evaluator struct {
	cfg       Config
	timeout   time.Duration
	argocdNS  string
	exemptKey string
	// boundary are the rules Config.BoundaryRules adds to the built-in
	// boundary rules.
	boundary map[string]bool

	// builtin is the built-in query prepared per object kind; nil when
	// disabled.
	builtin *kindQueries
	// shared caches the results of the built-in library's pure functions
	// across evaluations (see evaluator_cache.go).
	shared *sharedCache
	// inputs keeps the ast form of recent Applications, AppProjects and
	// review contexts (see evaluator_input_cache.go).
	inputs inputCaches
	// user is the prepared combined query over userRules; nil when there
	// are no user rules.
	user      *rego.PreparedEvalQuery
	userRules []userRule
	// userReads is what the user rules read of the object; nil when
	// they may read anything (see userReads).
	userReads *reads

	checks []Check
	// checkDefaults are the default severities of Options.CheckRules.
	checkDefaults map[string]Severity
}

// New compiles the built-in rules and the user policies once and prepares
// their queries. A policy that does not parse or compile fails New with an
// error naming the file and line; so does a Config naming an unknown rule.
func New(ctx context.Context, opts Options) (*Evaluator, error) {
	lib, err := fs.Sub(library, libraryDir)
	if err != nil {
		return nil, fmt.Errorf("open built-in policies: %w", err)
	}
	return newEvaluator(ctx, opts, lib)
}

// newEvaluator is New with the built-in library read from lib, so tests can
// exercise the built-in pipeline without the embedded rules.
func newEvaluator(ctx context.Context, opts Options, lib fs.FS) (*Evaluator, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("validate config: %w", err)
	}
	cfg := opts.Config
	cfg.Rules = maps.Clone(cfg.Rules)
	e := &Evaluator{
		cfg:       cfg,
		timeout:   opts.Timeout,
		argocdNS:  opts.Config.ArgoCDNamespaceOrDefault(),
		exemptKey: opts.Config.ExemptAnnotationOrDefault(),
		boundary:  make(map[string]bool, len(opts.Config.BoundaryRules)),
		checks:    append([]Check(nil), opts.Checks...),
		inputs: inputCaches{
			docs:     newDocumentCache(defaultDocumentCacheEntries),
			contexts: newContextCache(stringsTerm(opts.Config.Protected())),
		},
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	for _, id := range opts.Config.BoundaryRules {
		e.boundary[id] = true
	}
	known := map[string]bool{}
	for _, r := range builtinRules {
		known[r.ID] = true
	}
	defaults, err := checkRuleDefaults(opts.CheckRules, known)
	if err != nil {
		return nil, err
	}
	e.checkDefaults = defaults

	if opts.Builtin {
		pq, shared, err := prepareBuiltin(ctx, lib)
		if err != nil {
			return nil, err
		}
		e.builtin, e.shared = pq, shared
	}

	if len(opts.PolicyDirs) > 0 {
		up, err := prepareUser(ctx, opts.PolicyDirs, opts.Namespaces, opts.AllowNetwork)
		if err != nil {
			return nil, err
		}
		e.user, e.userRules, e.userReads = up.query, up.rules, up.reads
		for id := range up.ids {
			known[id] = true
		}
	} else if len(opts.Namespaces) > 0 {
		return nil, fmt.Errorf("select namespaces %v: no policy directories given", opts.Namespaces)
	}

	if err := opts.Config.checkRuleIDs(known); err != nil {
		return nil, err
	}
	return e, nil
}

// checkRuleDefaults validates the declared check rules, adds their ids to
// known and returns their default severities.
func checkRuleDefaults(rules []RuleInfo, known map[string]bool) (map[string]Severity, error) {
	defaults := make(map[string]Severity, len(rules))
	for _, r := range rules {
		switch r.Severity {
		case SeverityDeny, SeverityWarn, SeverityOff:
			defaults[r.ID] = r.Severity
		case "":
		default:
			return nil, fmt.Errorf("declare check rule %q: invalid severity %q", r.ID, r.Severity)
		}
		known[r.ID] = true
	}
	return defaults, nil
}

// prepareBuiltin compiles the built-in library, prepares its query and
// returns the cache its pure functions share.
func prepareBuiltin(ctx context.Context, lib fs.FS) (*kindQueries, *sharedCache, error) {
	modules, err := loadFS(lib)
	if err != nil {
		return nil, nil, fmt.Errorf("load built-in policies: %w", err)
	}
	// The library's comments, which evaluation never reads, would stay in
	// memory for the Evaluator's life, and every garbage collection would
	// walk them.
	for _, m := range modules {
		m.Comments = nil
	}
	compiler, err := compileModules(modules)
	if err != nil {
		return nil, nil, fmt.Errorf("compile built-in policies: %w", err)
	}
	qs, err := prepareKindQueries(ctx, compiler)
	if err != nil {
		return nil, nil, fmt.Errorf("prepare built-in policies: %w", err)
	}
	return qs, newSharedCache(compiler, defaultSharedCacheEntries), nil
}

// stringsTerm is the ast array of ss.
func stringsTerm(ss []string) *ast.Term {
	ts := make([]*ast.Term, len(ss))
	for i, s := range ss {
		ts[i] = ast.StringTerm(s)
	}
	return ast.ArrayTerm(ts...)
}

// compileModules compiles parsed modules into a fresh compiler, with OPA's
// own capabilities.
func compileModules(modules map[string]*ast.Module) (*ast.Compiler, error) {
	return compileWith(modules, nil)
}

// compileWith compiles parsed modules with caps (nil: every builtin of
// this OPA).
func compileWith(modules map[string]*ast.Module, caps *ast.Capabilities) (*ast.Compiler, error) {
	compiler := ast.NewCompiler().
		WithDefaultRegoVersion(ast.RegoV1).
		WithEnablePrintStatements(false)
	if caps != nil {
		compiler = compiler.WithCapabilities(caps)
	}
	compiler.Compile(modules)
	if compiler.Failed() {
		return nil, compiler.Errors
	}
	return compiler, nil
}

// prepare prepares query against an already compiled policy set.
func prepare(ctx context.Context, compiler *ast.Compiler, query string) (*rego.PreparedEvalQuery, error) {
	pq, err := rego.New(
		rego.Compiler(compiler),
		rego.Query(query),
		rego.SetRegoVersion(ast.RegoV1),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, err
	}
	return &pq, nil
}
