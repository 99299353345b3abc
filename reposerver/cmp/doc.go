// Package cmp speaks Argo CD's config management plugin protocol
// (cmpserver/plugin/plugin.proto, gRPC service
// plugin.ConfigManagementPluginService over a Unix socket), both ends: the
// repo-server's side, so existing plugin sidecars (argocd-cmp-server with
// its plugin.yaml) render tollgate's plugin sources unchanged, and a
// server, `tollgate cmp-server`, that runs a plugin.yaml as
// argocd-cmp-server does.
//
// # Protocol
//
// The messages are written by hand and encoded with protowire, byte for
// byte as protoc's code for plugin.proto encodes them; a gRPC codec named
// "proto" is forced on both ends so the content-subtype is Argo CD's.
// CheckPluginConfiguration is unary (google.protobuf.Empty in); the other
// three methods are client-streaming: the client sends a
// ManifestRequestMetadata (the source's path in the repository, the tgz's
// sha256 and size, the environment), then the repository as a tgz in
// File chunks, and gets one response.
//
// # Finding the plugin
//
// Generate follows Argo CD's repo-server: a named plugin is the socket
// <name>.sock; discovery tries every socket in the directory in name order
// and takes the first whose discovery is configured (fileName, find.glob
// or find.command) and matches the source. The repository is archived
// once, through an os.Root so nothing outside it is read, and streamed to
// each plugin asked. Differences from Argo CD: .git is never sent; Git
// credentials are never sent, even to a plugin with provideGitCreds; a
// symlink that resolves outside the repository fails the render (Argo CD
// fails such a repository before it gets to the plugin); calls are not
// retried.
//
// # Serving a plugin
//
// NewServer and Listen (or Serve) receive each request into a directory
// of its own, refusing archives over their limits, with a wrong checksum
// or size, with absolute or .. names, or with symlinks that resolve
// outside it; then run spec.init and spec.generate in the source's
// directory with the sidecar's environment plus the request's, and answer
// the documents of the YAML or JSON stream generate printed, each as JSON.
// Each command runs in its own process group, killed at ExecTimeout or
// when the request ends, and its stderr (the end of it) goes into the
// error. This is the one place tollgate runs commands a configuration
// names: the operator's plugin.yaml, in the plugin's own container.
package cmp
