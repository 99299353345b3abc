package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/policies/report"
	"github.com/tollgate-dev/tollgate/webhook"
	"github.com/tollgate-dev/tollgate/webhook/audit"
)

// auditOptions are the flags of `tollgate audit`.
type auditOptions struct {
	kubeconfig        string
	configFile        string
	namespace         string
	webhookConfigName string
	chunkSize         int64
	output            string
	failOnWarn        bool
	writeReports      bool
}

func newAuditCmd() *cobra.Command {
	o := auditOptions{namespace: "tollgate-system", webhookConfigName: "tollgate", chunkSize: audit.DefaultChunkSize}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Judge what the cluster already stores, as the webhook would judge it",
		Long: `Judge the objects the cluster already stores with the webhook's rules and
exemptions (enforcement point audit): every kind a rule can judge is listed
in pages of --audit-chunk-size, across all namespaces but those the webhook
configuration --webhook-config-name never sends and the exempt namespaces of
--config. An object tracked by an Application is judged with its project.

The report has the outputs of tollgate test: one result per object with
violations (its file is the object's API path) and one per object or kind
that could not be listed or judged. With --write-reports the results are
also written as PolicyReports (wgpolicyk8s.io/v1alpha2), one per namespace
and a ClusterPolicyReport, as the webhook's audit loop writes them.

Exit status: 0 when nothing is denied, 1 when something is (or, with
--fail-on-warn, warned), 2 on usage errors, or when something could not be
listed or judged (after the report).`,
		Example: `  tollgate audit
  tollgate audit --config webhook.yaml -o json
  tollgate audit --write-reports --kubeconfig admin.conf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAudit(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)")
	f.StringVar(&o.configFile, "config", "", "webhook configuration `FILE` (exempt namespaces, rule severities, Argo CD namespace)")
	f.StringVar(&o.namespace, "namespace", o.namespace, "namespace tollgate runs in, always exempt")
	f.StringVar(&o.webhookConfigName, "webhook-config-name", o.webhookConfigName, `ValidatingWebhookConfiguration whose namespaceSelectors exclude namespaces ("" excludes none)`)
	f.Int64Var(&o.chunkSize, "audit-chunk-size", o.chunkSize, "objects per list page (bounds memory)")
	f.StringVarP(&o.output, "output", "o", report.FormatText, "report format: "+strings.Join(report.Formats(), ", "))
	f.BoolVar(&o.failOnWarn, "fail-on-warn", false, "exit 1 on warnings too")
	f.BoolVar(&o.writeReports, "write-reports", false, "write PolicyReports and a ClusterPolicyReport (needs config/policyreport's CRDs)")
	return cmd
}

// cacheSyncTimeout bounds the wait for the Applications and AppProjects
// to be read.
const cacheSyncTimeout = 2 * time.Minute

// reachable checks that the API server of restCfg answers.
func reachable(ctx context.Context, restCfg *rest.Config) error {
	cfg := rest.CopyConfig(restCfg)
	cfg.Timeout = 15 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create discovery client: %w", err)
	}
	if _, err := dc.ServerVersion(); err != nil {
		return fmt.Errorf("reach the API server %s: %w", cfg.Host, err)
	}
	return ctx.Err()
}

// runAudit audits once, writes the report and returns the exit status as
// an error, as runTest does.
func runAudit(cmd *cobra.Command, o auditOptions) error {
	if !slices.Contains(report.Formats(), o.output) {
		return usageError(fmt.Errorf("invalid --output %q: valid formats are %s", o.output, strings.Join(report.Formats(), ", ")))
	}
	if o.chunkSize < 1 {
		return usageError(fmt.Errorf("--audit-chunk-size %d: want at least 1", o.chunkSize))
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	cfg, eval, err := loadWebhookPolicies(ctx, o.configFile, o.namespace)
	if err != nil {
		return usageError(err)
	}
	kc, err := loadKubeconfig(o.kubeconfig)
	if err != nil {
		return usageError(err)
	}
	restCfg := rest.CopyConfig(kc.rest)
	restCfg.UserAgent = "tollgate-audit"
	// An unreachable API server is an error at once, not a cache that
	// waits for it.
	if err := reachable(ctx, restCfg); err != nil {
		return usageError(err)
	}
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	c, err := cache.New(restCfg, webhookCacheOptions(cfg, scheme))
	if err != nil {
		return fmt.Errorf("create cache: %w", err)
	}
	if err := watchProjects(ctx, c); err != nil {
		return usageError(err)
	}
	go func() { _ = c.Start(ctx) }()
	syncCtx, cancelSync := context.WithTimeout(ctx, cacheSyncTimeout)
	defer cancelSync()
	if !c.WaitForCacheSync(syncCtx) {
		return usageError(errors.New("read Applications and AppProjects: the cache did not sync"))
	}
	handler, err := webhook.NewHandler(webhook.Options{Config: cfg, Evaluator: eval, Reader: c, Namespace: o.namespace})
	if err != nil {
		return usageError(err)
	}
	a, err := newAuditor(restCfg, handler, audit.Options{
		WebhookConfigName: o.webhookConfigName, ChunkSize: o.chunkSize,
		WriteReports: o.writeReports, KeepFindings: true,
	})
	if err != nil {
		return err
	}
	res, err := a.Run(ctx)
	if err != nil {
		return usageError(fmt.Errorf("audit: %w", err))
	}
	if res.Reports != "" && o.output == report.FormatText {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: PolicyReports %s\n", res.Reports)
	}
	rep := auditReport(res)
	rep.ToolVersion = version
	if err := report.Write(cmd.OutOrStdout(), o.output, rep); err != nil {
		return err
	}
	if n := rep.Summary.Errors; n > 0 {
		return usageError(fmt.Errorf("%d kinds, objects or reports could not be listed, judged or written; the report lists them, and everything else was judged", n))
	}
	if res.NoReportCRDs {
		return usageError(errors.New("--write-reports: the PolicyReport CRDs (wgpolicyk8s.io/v1alpha2) are not installed: kubectl apply --server-side -k config/policyreport"))
	}
	if rep.Summary.Denied > 0 || o.failOnWarn && rep.Summary.Warned > 0 {
		return deniedError()
	}
	return nil
}

// newAuditor builds an Auditor on restCfg that judges with r; opts gives
// the rest.
func newAuditor(restCfg *rest.Config, r audit.Reviewer, opts audit.Options) (*audit.Auditor, error) {
	restCfg = rest.CopyConfig(restCfg)
	if restCfg.QPS == 0 && restCfg.RateLimiter == nil {
		// client-go's default of 5 requests/s would pace a cluster of
		// many kinds; the lists are paged and few.
		restCfg.QPS, restCfg.Burst = 50, 100
	}
	// Deprecated kinds (v1 Endpoints) are listed too, every run: their
	// warnings would only fill the log.
	restCfg.WarningHandler = rest.NoWarnings{}
	c, err := client.New(restCfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	opts.Client, opts.Discovery, opts.Reviewer = c, dc, r
	return audit.New(opts)
}

// auditReport turns an audit's result into the report `tollgate test`
// writes: one result per object with violations, its API path as the
// file, and one error result per failure.
func auditReport(res *audit.Result) report.Report {
	var rep report.Report
	for _, f := range res.Findings {
		r := report.Result{File: f.Object.Path(), Kind: f.Object.Kind, Name: f.Object.Name, Namespace: f.Object.Namespace}
		for _, v := range f.Violations {
			r.Violations = append(r.Violations, report.Finding{Rule: v.Rule, Severity: v.Severity, Message: v.Message})
		}
		rep.Results = append(rep.Results, r)
	}
	for _, f := range res.Failures {
		r := report.Result{File: cmp.Or(f.Object.Path(), "cluster"), Kind: f.Object.Kind, Name: f.Object.Name, Namespace: f.Object.Namespace, Error: f.Err.Error()}
		rep.Results = append(rep.Results, r)
	}
	rep.Summary = report.Summarize(rep.Results)
	rep.Summary.Documents = res.Judged
	rep.Summary.Files = res.Judged + rep.Summary.Errors
	return rep
}
