package compat

// Where the differences of annotations and options are described.
const (
	optAnchorDiffers = "troubleshooting.md#annotations-and-options"
	optAnchorGeneral = "troubleshooting.md#differences-from-argo-cd"
	optAnchorSync    = "sync-engine.md#how-a-sync-runs"
)

// annotationRows: see doc.go.
var annotationRows = []Row{
	{Kind: Annotation, Name: "argocd.argoproj.io/application-set-refresh", Verdict: Honoured, Proof: "TestApplicationSetGitDirectories",
		Note: "set by the Git webhook on a push or a pull request event; the ApplicationSet is generated again, reading Git and the provider anew, and the annotation removed"},
	{Kind: Annotation, Name: "argocd.argoproj.io/client-side-apply-migration-manager", Verdict: Different, Proof: optAnchorDiffers,
		Note: "names the field manager whose fields move to tollgate's, as in Argo CD; the migration runs before every apply, as every apply is server-side"},
	{Kind: Annotation, Name: "argocd.argoproj.io/compare-options", Verdict: Different, Proof: optAnchorDiffers,
		Note: "IgnoreExtraneous is honoured; ServerSideDiff and IncludeMutationWebhook change nothing"},
	{Kind: Annotation, Name: "argocd.argoproj.io/deletion-approved", Verdict: Honoured, Proof: "TestDeleteConfirmWaitsForApproval",
		Note: "a time at or after the operation's or deletion's start approves Prune=confirm and Delete=confirm"},
	{Kind: Annotation, Name: "argocd.argoproj.io/hook", Verdict: Different, Proof: optAnchorGeneral,
		Note: "Argo CD's hook types (Helm's too) and Skip; a hook never deletes or replaces an object without this Application's tracking id; unknown types are named in UnknownHookWarning"},
	{Kind: Annotation, Name: "argocd.argoproj.io/hook-delete-policy", Verdict: Different, Proof: optAnchorGeneral,
		Note: "BeforeHookCreation, HookSucceeded, HookFailed, on objects this Application tracks only; unknown policies are named in UnknownHookWarning"},
	{Kind: Annotation, Name: "argocd.argoproj.io/hook-finalizer", Verdict: Different, Proof: optAnchorDiffers,
		Note: "a finalizer: a deleting object that has it is judged by its status, as in Argo CD; tollgate puts it on no hook"},
	{Kind: Annotation, Name: "argocd.argoproj.io/hydrate", Verdict: Different, Proof: optAnchorDiffers,
		Note: "not read: there is no source hydrator; ApplicationSets keep it on the Applications they write"},
	{Kind: Annotation, Name: "argocd.argoproj.io/hydrate-timestamp", Verdict: Different, Proof: optAnchorDiffers,
		Note: "not read: there is no source hydrator"},
	{Kind: Annotation, Name: "argocd.argoproj.io/ignore-default-links", Verdict: Different, Proof: optAnchorDiffers,
		Note: "not read: no links are made from objects"},
	{Kind: Annotation, Name: "argocd.argoproj.io/ignore-healthcheck", Verdict: Different, Proof: optAnchorDiffers,
		Note: "\"true\" leaves the object's health out of the Application's, as in Argo CD, and a wave does not wait for it"},
	{Kind: Annotation, Name: "argocd.argoproj.io/ignore-resource-updates", Verdict: Different, Proof: optAnchorDiffers,
		Note: "not read"},
	{Kind: Annotation, Name: "argocd.argoproj.io/ignore-restart-policy", Verdict: Different, Proof: optAnchorDiffers,
		Note: "a running OnFailure or Never Pod that is no hook is judged like a long-running one, whatever the value (Argo CD: \"true\")"},
	{Kind: Annotation, Name: "argocd.argoproj.io/installation-id", Verdict: Different, Proof: optAnchorDiffers,
		Note: "neither written nor compared"},
	{Kind: Annotation, Name: "argocd.argoproj.io/managed-by-url", Verdict: Different, Proof: optAnchorDiffers,
		Note: "not read"},
	{Kind: Annotation, Name: "argocd.argoproj.io/manifest-generate-paths", Verdict: Different, Proof: optAnchorDiffers,
		Note: "not read: a push refreshes every Application of the repository"},
	{Kind: Annotation, Name: "argocd.argoproj.io/refresh", Verdict: Honoured, Proof: "TestGitServerDownThenForcePush",
		Note: "normal or hard: compared at once (hard renders again), then removed"},
	{Kind: Annotation, Name: "argocd.argoproj.io/refresh-timestamp", Verdict: Different, Proof: optAnchorDiffers,
		Note: "neither read nor removed"},
	{Kind: Annotation, Name: "argocd.argoproj.io/secret-type", Verdict: Honoured, Proof: "TestClustersResolve",
		Note: "a label: repository, repo-creds and cluster Secrets are found by it, as in Argo CD"},
	{Kind: Annotation, Name: "argocd.argoproj.io/skip-reconcile", Verdict: Different, Proof: optAnchorSync,
		Note: "a true value leaves the Application alone, as in Argo CD; not read on cluster Secrets"},
	{Kind: Annotation, Name: "argocd.argoproj.io/sync-options", Verdict: Different, Proof: optAnchorDiffers,
		Note: "an object's sync options, overriding the Application's option by option; one that cannot be read fails the sync"},
	{Kind: Annotation, Name: "argocd.argoproj.io/sync-wave", Verdict: Different, Proof: optAnchorDiffers,
		Note: "the object's wave (else helm.sh/hook-weight, else 0); a value that is not an integer fails the sync"},
	{Kind: Annotation, Name: "argocd.argoproj.io/tracking-id", Verdict: Honoured, Proof: "TestTrackingRoundTrip",
		Note: "written and read in Argo CD's format"},
}
