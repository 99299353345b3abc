// Package webhook is tollgate's validating admission webhook: it adapts
// AdmissionReview requests to policies.Input, applies exemptions, judges with
// the shared evaluator and turns the Decision into an admission response,
// with one log line and metrics per request.
//
// Handler.Decide decides one request and returns an error when it cannot.
// Serve it through NewHTTPHandler, the package's only admission handler: it
// limits the body size, checks the content type, decodes
// admission.k8s.io/v1 (and v1beta1) reviews in one pass and recovers
// panics, as controller-runtime's admission.Webhook does, and an error from
// Decide becomes HTTP 500. Handler is not an admission.Handler,
// so it cannot be registered without that contract. Handler.Review judges
// an object the cluster already stores, for the audit (package audit).
//
// # Request path
//
//  1. CONNECT requests and sub-resources (status, scale, binding, ...) are
//     allowed without judging: such a write cannot change what the main
//     resource was admitted with. The exception is pods/ephemeralcontainers
//     (kubectl debug), which adds containers to a running Pod: the ephemeral
//     containers it adds are judged like any container (step 7). Leases,
//     Events, token and access reviews are allowed without judging too
//     (neverJudged), whatever the webhook configuration sends.
//  2. Exempt users, groups and namespaces (Config) are allowed.
//  3. Argo CD Applications: the AppProject named by spec.project is read from
//     the informer cache (from the API server only when the cache lacks it
//     and Options.APIReader is set); a missing project yields
//     project-not-found, a missing "default" project is Argo CD's implicit
//     allow-all policies.DefaultProject() when Config.ImplicitDefaultProject
//     says so.
//  4. Argo CD AppProjects: the new project is judged (no-argocd-destination,
//     app-namespace) on CREATE and UPDATE, every time, so a project that
//     permits the Argo CD namespace is never admitted. The Applications that
//     use the project (from the cache, indexed by IndexApplications) are then
//     judged against the new project and every Application the change newly
//     breaks is returned as a warning. DELETE is allowed, with a warning
//     naming the Applications that still use the project.
//  5. Every other object: the Application that owns it is found through Argo
//     CD's tracking annotation argocd.argoproj.io/tracking-id (and, unless
//     Config.TrackingMethod says otherwise, the app.kubernetes.io/instance
//     label; v1alpha1.OwnerOf, read as admission reads it: see
//     v1alpha1.OwnerOptions), so project destinations and resource lists
//     apply. An object no Application owns is judged only when a rule
//     judges its kind on its own (pod-bearing kinds, Secrets, SealedSecrets,
//     ExternalSecrets: judgedKinds); any other is allowed without judging.
//     DELETE is allowed without judging.
//  6. An UPDATE that changes only metadata or status, or that touches an
//     object already being deleted, is allowed without judging, so that
//     controllers can keep writing status and removing finalizers of objects
//     admitted before a policy changed.
//  7. pods/ephemeralcontainers: the ephemeral containers the request adds
//     (by name, against the old Pod) are judged as the only containers of
//     the Pod, without its Application; the Pod's own containers were
//     judged when it was created.
//
// # Objects
//
// The object under review is judged as it was sent (a map, decoded from the
// request): the rules see exactly what was submitted, fields the Go types
// do not know included, and an Application under review is its own
// policies.Input.Application. Every other Application and AppProject is a
// v1alpha1 type: read typed from the cache, and an admitted Application or
// AppProject is also decoded typed for the webhook's own decisions (its
// project, the Applications a project change concerns). They become maps
// only where a policies.Input is built (input.go), with policies.ObjectMap,
// once per version (objectmaps.go).
//
// Deny violations become one line each, "[rule-id] message", in the denial
// message; warn violations become admission warnings in the same format. A
// failed evaluation (or lookup) is an error from Decide, which
// NewHTTPHandler answers with HTTP 500 so that the API server applies the
// webhook's failurePolicy. In audit mode nothing is denied: deny violations
// are logged, counted and returned as warnings, and a failure allows the
// request with a warning.
package webhook
