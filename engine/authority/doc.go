// Package authority is the one door out to a destination cluster: every
// write the Application controller makes on an Application's behalf passes
// through a Door, and no other package of the engine holds a client that
// writes to a destination (writers_test.go checks it with the type checker).
//
// A Door is bound to one Application and the AppProject the cluster holds
// for it. Before it writes, it judges every object the write touches (the
// desired objects of the waves, the Namespace of CreateNamespace and
// managedNamespaceMetadata, the live objects a prune or a cascade deletion
// would delete, delete hooks) with the same evaluator and the same boundary
// rules the sync gate uses:
//
//	project-resource-denied     the project's cluster/namespace resource lists
//	project-destination-denied  the project's destinations, per object namespace
//	protected-namespace         the control plane's and tollgate's namespaces
//
// A live object is judged like a desired one, whatever its tracking id or
// instance label says: a tracking id copied onto another team's object, a
// Helm release label shared with an Application's name, or an Application
// that moved to another project never lead to a write outside the project.
// When anything is refused, nothing is written and the write returns a
// *RefusedError naming each object and rule, as Argo CD's permission
// validator fails the sync task ("resource … is not permitted in project
// …"). A missing AppProject permits nothing.
//
// A diff shown to a person (tollgate app diff, the UI: Door.DiffDetailed)
// is judged in the same way before any live object is read, the
// Application's own destination included, and refused with a *RefusedError
// (verb diff) when anything is not permitted: the destination's
// credentials, a remote cluster's Secret among them, read for nobody what
// the project would not let the Application write.
//
// The gate's full evaluation (every rule, Door.Judge) goes through the same
// Door and is remembered per object (group, kind, namespace, name: the only
// inputs of the boundary rules besides the Application and its project), so
// a sync does not judge a desired object twice.
//
// With sync impersonation on (argocd-cm application.sync.impersonation.enabled,
// as Argo CD 2.13+), a Door writes as the service account the project's
// destinationServiceAccounts name for the destination (ServiceAccountFor):
// server-side applies, their dry runs, deletions and namespace creation go
// to the API server as system:serviceaccount:NS:NAME, so the API server's
// RBAC bounds what a tenant's Application can do. Comparisons and lists
// read with the controller's own rights, as Argo CD's do.
package authority
