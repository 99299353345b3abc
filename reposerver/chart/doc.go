// Package chart fetches Helm charts from Helm repositories (index.yaml over
// HTTPS) and OCI registries into a verified on-disk cache, for the
// repo-server: an Application's `spec.source.chart`, and the dependencies a
// chart declares in Chart.yaml but does not vendor in charts/, resolved as
// `helm dependency build` resolves them (Chart.lock when it is in sync,
// else the highest version each constraint allows).
//
// Versions are resolved as Helm resolves them (an index entry of exactly
// that version, else the highest the constraint allows; for OCI, the
// registry client's tag listing) and OCI charts are pulled with Helm's
// registry client. Everything read from the network
// is bounded: an index, an archive and each file in it have a size limit,
// and every request a timeout. An archive whose index entry names a digest
// must match it; OCI content is verified by digest as it is pulled.
// Archives are unpacked without links, absolute paths or "..", within
// Helm's own size limits.
//
// A dependency is fetched only from a repository the caller permits
// (FetchOptions.Permitted: the AppProject's sourceRepos), every one judged
// before anything is fetched. Indexes and registries are servers a tenant
// may choose, so the HTTP client presents a TLS client certificate only to
// its repository's host, follows redirects only within the scheme and host
// of a request (at most five), and never dials a loopback, link-local or
// cloud metadata address, checked on the resolved address (see
// Cache.httpClient).
//
// Credentials come from Argo CD repository Secrets of type helm
// (reposerver.HelmRepository, Match): a repository Secret by URL, else the repo-creds
// template with the longest matching prefix. Basic auth is sent only to
// the repository's own host unless the source passes credentials, as Helm
// does. Nothing is cached across AppProjects that fetched with
// project-scoped credentials.
package chart
