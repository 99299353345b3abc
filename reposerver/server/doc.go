// Package reposerver owns the untrusted half of a sync: it fetches an
// Application's sources from Git and renders them, and nothing else. It
// holds Git credentials for the length of one request (the controller reads
// the repository Secrets and sends what a request needs, as Argo CD's
// application controller does) and no Kubernetes credentials at all.
//
// A Service does the work: Generate fetches every source at its revision
// (go-git, one cache of repositories and checkouts), resolves each source
// to render options with render.ApplicationOptions (the resolver the CLI
// uses too), renders it through a Renderer (a child process per render, under
// hard limits, in production) and caches the output per repository,
// revision, path and options. GenerateApplications runs an ApplicationSet's
// generators and templates through the same Renderer (one child process per
// generation, which asks this process for the checkouts its git generators
// read). Run removes checkouts no request used for a
// while, so the disk stays bounded. A request of an Application whose
// AppProject sets signatureKeys carries a reposerver.SignatureCheck: the commit of
// every Git source is verified before anything is rendered, on every
// request, and nothing is rendered unless all are signed with an allowed
// key.
//
// The Service is reached two ways, with the same code and limits behind
// both: in the controller's own process (the default, for one binary and
// local development), or over HTTPS from `tollgate repo-server` (NewHandler
// on the server side, reposerver.Client on the controller's), which is how the
// install in config/ runs it: the process that parses tenant charts and
// overlays has no token to the API server, and the controller parses none.
//
// The wire protocol is JSON over HTTPS: POST /v1/manifests with a reposerver.Request,
// answered by a reposerver.Response or an reposerver.Error. A request whose render key matches
// KnownKey is answered without objects (Unchanged), so an idle resync
// moves a few hundred bytes.
package server
