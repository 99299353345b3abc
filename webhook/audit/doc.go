// Package audit judges what the cluster already stores, with the webhook's
// evaluator and exemptions (enforcement point audit), and reports it as
// wgpolicyk8s.io/v1alpha2 PolicyReports: one per namespace and one
// ClusterPolicyReport for cluster-scoped objects, the format Kyverno and
// Policy Reporter read.
//
// Admission judges only new writes: a rule switched on today says nothing
// about the objects that already run, nor about what was written while the
// webhook was down (the failure policy of ordinary resources lets them
// through). The audit closes that gap.
//
// # Data path
//
//  1. Namespaces: every namespace that no webhook of the
//     ValidatingWebhookConfiguration selects (its namespaceSelector) is
//     excluded, as the API server would never send its writes; the
//     webhook's exempt namespaces are skipped by the Reviewer.
//  2. Kinds: every resource type discovery lists with the list verb,
//     except those no rule judges (Events, Leases, reviews): a rule judges
//     a kind on its own (pods, workloads, secrets, Applications,
//     AppProjects), and any kind an Application tracks falls under its
//     project's rules.
//  3. Objects: each kind is listed across all namespaces in pages of
//     Options.ChunkSize, so memory is bounded by a page and the
//     violations found, whatever the cluster's size. Each object goes to
//     the Reviewer (webhook.Handler.Review). A list whose continue token
//     expires is started again for that kind.
//  4. Reports: the violations of a namespace, deny as fail (severity high)
//     and warn as warn (severity medium), one result per rule and object,
//     are written with server-side apply into the PolicyReport
//     tollgate-audit of that namespace (the ClusterPolicyReport
//     tollgate-audit for cluster-scoped objects), updated in place; the
//     summary's pass counts the audited objects without violations. A
//     report of a namespace that has no audited object any more is
//     deleted. When the PolicyReport CRDs are not installed the run still
//     counts its findings (metrics, CLI report).
package audit
