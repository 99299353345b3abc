package compat

// appSetDiffs is where docs/applicationsets.md lists how tollgate's
// ApplicationSets differ from Argo CD's.
const appSetDiffs = "applicationsets.md#limits-and-differences-from-argo-cd"

// applicationSetRows: see doc.go.
var applicationSetRows = []Row{
	{Kind: Field, Name: "ApplicationPreservedFields.annotations", Verdict: Honoured, Proof: "TestAppSetPreservedFields",
		Note: "kept as they are on the live Application when it is updated, with Argo CD's own (refresh, notified, hydrate)"},
	{Kind: Field, Name: "ApplicationPreservedFields.labels", Verdict: Honoured, Proof: "TestAppSetPreservedFields",
		Note: "kept as they are on the live Application when it is updated"},

	{Kind: Field, Name: "ApplicationSet.spec", Verdict: Honoured, Proof: "TestGenerate",
		Note: "generators and template run as in Argo CD; see its fields"},
	{Kind: Field, Name: "ApplicationSet.status", Verdict: Honoured, Proof: "TestApplicationSetGitDirectories",
		Note: "conditions, resources and resourcesCount written; see its fields"},

	{Kind: Field, Name: "ApplicationSetCondition.lastTransitionTime", Verdict: Honoured, Proof: "TestAppSetConditions",
		Note: "kept while the condition's status, reason and message stay the same"},
	{Kind: Field, Name: "ApplicationSetCondition.message", Verdict: Different, Proof: appSetDiffs,
		Note: "Argo CD's error messages; other words when all is well, and every validation error and denial listed"},
	{Kind: Field, Name: "ApplicationSetCondition.reason", Verdict: Different, Proof: appSetDiffs,
		Note: "Argo CD's reasons, and PolicyViolation for a denial by the gate; ResourcesUpToDate=False carries the error's reason"},
	{Kind: Field, Name: "ApplicationSetCondition.status", Verdict: Honoured, Proof: "TestAppSetConditions",
		Note: "True or False as Argo CD sets them"},
	{Kind: Field, Name: "ApplicationSetCondition.type", Verdict: Honoured, Proof: "TestAppSetConditions",
		Note: "ErrorOccurred, ParametersGenerated and ResourcesUpToDate on every pass (no rollout conditions: progressive sync is refused)"},

	{Kind: Field, Name: "ApplicationSetResourceIgnoreDifferences.jqPathExpressions", Verdict: Honoured, Proof: "TestAppSetIgnoreApplicationDifferences",
		Note: "the fields the jq paths select keep their live values on update"},
	{Kind: Field, Name: "ApplicationSetResourceIgnoreDifferences.jsonPointers", Verdict: Honoured, Proof: "TestAppSetIgnoreApplicationDifferences",
		Note: "the fields the JSON pointers name keep their live values on update"},
	{Kind: Field, Name: "ApplicationSetResourceIgnoreDifferences.name", Verdict: Honoured, Proof: "TestAppSetIgnoreApplicationDifferences",
		Note: "the rule holds for the Application of that name only; empty, for every one"},

	{Kind: Field, Name: "ApplicationSetSpec.applyNestedSelectors", Verdict: Honoured, Proof: "TestGenerateNestedGenerators",
		Note: "ignored, as in Argo CD 3: the selectors of nested generators always apply"},
	{Kind: Field, Name: "ApplicationSetSpec.generators", Verdict: Honoured, Proof: "TestGenerate",
		Note: "each generator's parameter sets render the template, in order; a later Application of a name already generated is refused"},
	{Kind: Field, Name: "ApplicationSetSpec.goTemplate", Verdict: Honoured, Proof: "TestGenerateListElementsYaml",
		Note: "Go templates with Sprig and Argo CD's functions as in Argo CD; without it {{param}} substitution, an unknown parameter left as written"},
	{Kind: Field, Name: "ApplicationSetSpec.goTemplateOptions", Verdict: Honoured, Proof: "TestGenerateErrors",
		Note: "missingkey options of text/template; an unknown option is an error naming it"},
	{Kind: Field, Name: "ApplicationSetSpec.ignoreApplicationDifferences", Verdict: Different, Proof: appSetDiffs,
		Note: "the fields named keep their live values on update, also inside a list that changes (Argo CD's merge patch resets them there)"},
	{Kind: Field, Name: "ApplicationSetSpec.preservedFields", Verdict: Honoured, Proof: "TestAppSetPreservedFields",
		Note: "the annotations and labels named keep their live values on update"},
	{Kind: Field, Name: "ApplicationSetSpec.strategy", Verdict: Refused, Proof: "progressive syncs (RollingSync) are not implemented",
		Note: "RollingSync is refused by name; AllAtOnce or no type is accepted (every Application at once)"},
	{Kind: Field, Name: "ApplicationSetSpec.syncPolicy", Verdict: Honoured, Proof: "TestApplicationSetRemovedElement",
		Note: "see its fields"},
	{Kind: Field, Name: "ApplicationSetSpec.template", Verdict: Honoured, Proof: "TestGenerate",
		Note: "rendered with each parameter set, under a generator's own template; metadata.namespace is the ApplicationSet's"},
	{Kind: Field, Name: "ApplicationSetSpec.templatePatch", Verdict: Honoured, Proof: "TestGenerate",
		Note: "rendered with each parameter set, applied as a strategic merge patch after the resources-finalizer default, spec.project kept"},

	{Kind: Field, Name: "ApplicationSetStatus.applicationStatus", Verdict: Different, Proof: appSetDiffs,
		Note: "never written (progressive sync is refused), nor cleared when another controller left it"},
	{Kind: Field, Name: "ApplicationSetStatus.conditions", Verdict: Honoured, Proof: "TestAppSetConditions",
		Note: "Argo CD's three conditions, set on every pass; see ApplicationSetCondition"},
	{Kind: Field, Name: "ApplicationSetStatus.health", Verdict: Different, Proof: appSetDiffs,
		Note: "never written; the conditions say whether the ApplicationSet is up to date"},
	{Kind: Field, Name: "ApplicationSetStatus.resources", Verdict: Different, Proof: appSetDiffs,
		Note: "every owned Application with its sync and health status, also updated when those change; no 5,000-entry cap"},
	{Kind: Field, Name: "ApplicationSetStatus.resourcesCount", Verdict: Honoured, Proof: "TestApplicationSetGitDirectories",
		Note: "the number of Applications the ApplicationSet owns"},

	{Kind: Field, Name: "ApplicationSetSyncPolicy.applicationsSync", Verdict: Different, Proof: appSetDiffs,
		Note: "create-only, create-update, create-delete and sync (the default) as in Argo CD, but create-only and create-delete do not adopt an existing Application"},
	{Kind: Field, Name: "ApplicationSetSyncPolicy.preserveResourcesOnDeletion", Verdict: Honoured, Proof: "TestApplicationSetRemovedElement",
		Note: "the resources finalizer is left off the generated Applications, so deleting one leaves its resources"},

	{Kind: Field, Name: "ApplicationSetTemplate.metadata", Verdict: Honoured, Proof: "TestGenerate",
		Note: "name, namespace, labels, annotations and finalizers, as Argo CD copies them"},
	{Kind: Field, Name: "ApplicationSetTemplate.spec", Verdict: Honoured, Proof: "TestGenerate",
		Note: "the generated Application's spec, every string rendered"},

	{Kind: Field, Name: "ApplicationSetTemplateMeta.annotations", Verdict: Honoured, Proof: "TestClusterParamsWithoutCredentials",
		Note: "rendered, keys included, and written to the Application"},
	{Kind: Field, Name: "ApplicationSetTemplateMeta.finalizers", Verdict: Honoured, Proof: "TestUpdateKeepsDeleteHookFinalizers",
		Note: "kept, the resources finalizer added when there are none (templatePatch's merge with it), the live pre- and post-delete hook finalizers kept"},
	{Kind: Field, Name: "ApplicationSetTemplateMeta.labels", Verdict: Honoured, Proof: "TestApplicationSetGitDirectories",
		Note: "rendered and written to the Application"},
	{Kind: Field, Name: "ApplicationSetTemplateMeta.name", Verdict: Honoured, Proof: "TestGenerate",
		Note: "the generated Application's name, rendered"},
	{Kind: Field, Name: "ApplicationSetTemplateMeta.namespace", Verdict: Honoured, Proof: "TestGenerate",
		Note: "replaced by the ApplicationSet's namespace, as in Argo CD"},
}
