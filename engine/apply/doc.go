// Package apply is the client side of a sync: it talks to the API server to
// compare desired objects with live ones, apply waves, wait for health and
// prune. It executes what its subpackage plan decided: plan is the model
// of a sync (phases, hooks, waves, sync options), pure data without I/O,
// which the controller builds and apply runs. Only engine/authority, the
// door every write passes through, calls apply to write.
//
// Everything is applied with server-side apply under one stable field
// manager ("tollgate"). Ownership follows the tracking metadata of
// Options.Tracking (v1alpha1.OwnedBy): an object that carries this
// Application's tracking id (or, with label tracking and no tracking
// annotation, its instance label) is ours and is applied with force, taking
// back fields someone edited by hand; an object that exists but is not ours
// is applied without force, so a field another manager set to another value
// is a conflict and an error, never a silent takeover. Before an existing
// object is applied, the fields a client-side kubectl apply owns (and, on
// our objects, those Argo CD's controller owns) move to tollgate's manager
// (ClientSideApplyMigration, see migrateFields), so that a field Git no
// longer has is removed rather than left to a manager nobody runs. A hook goes further: the object in its
// place is deleted (BeforeHookCreation, HookSucceeded, HookFailed), replaced
// or force-applied only when it carries the Application's tracking id for
// itself; otherwise the hook fails its wave before anything of the wave is
// written.
//
// The sync options Replace=true and Force=true write an existing object as
// Argo CD does (see modeOf), and only an object of the Application, judged
// the same way: Replace=true replaces it with a PUT of the whole manifest
// (kubectl replace); Force=true with it deletes it, waits until it is gone
// and creates it (kubectl replace --force); Force=true alone deletes and
// re-creates it when the API server rejects the apply, an immutable field
// changed (kubectl apply --force). A CustomResourceDefinition or a
// Namespace is never deleted for them. A PUT is made under the same field
// manager, and the fields it records under that manager's Update entry are
// moved to its Apply entry, so the next server-side apply owns and prunes
// them as usual; a re-created object is created by server-side apply.
//
// Diff compares by server-side dry run, so that defaults and admission
// mutations do not show as drift, after removing the paths the
// Application's ignoreDifferences name (JSON pointers, jq path expressions,
// fields owned by given managers).
//
// ApplyWave dry-runs every object of a wave before it changes anything, so a
// manifest the API server rejects fails the wave with nothing applied; then
// it applies in order and waits until every object is healthy and every hook
// completed, using the health function the engine injects (this package does
// not import engine/health). Run chains the waves of a plan and stops at the
// first failure, then runs the SyncFail hooks.
//
// Prune deletes what an Application owns and no longer wants, re-reading
// each object just before deleting it and deleting with a precondition on
// its UID and resourceVersion, so an object that changed hands in between is
// never deleted.
//
// CallCounter counts API requests for benchmarks.
package apply
