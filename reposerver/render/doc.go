// Package render turns what is in a Git repository into the Kubernetes
// objects tollgate reviews and applies. It owns two steps that the CLI
// (`tollgate test`) and the sync engine share, so that both see exactly the
// same objects:
//
//   - Decoding: [Decode] and [DecodeFile] read multi-document YAML and JSON
//     into plain values (map[string]any, []any, string, int64, float64,
//     bool, nil) and remember where each object came from, so that a
//     violation can be reported at the line a reviewer edits
//     ([Document.LineOf]). Files that are not Kubernetes manifests are
//     skipped with a [Note]; malformed manifests are a [DecodeError].
//
//   - Rendering: [Build] renders an application source the way Argo CD does:
//     a plain directory of manifests, a kustomization (krusty in-process,
//     plugins off, restricted to the repository) or a Helm chart (the Helm
//     SDK with `helm template` semantics). Options mirror the rendering
//     fields of Argo CD's ApplicationSource.
//
// Nothing outside the repository root is ever read: paths are confined after
// symlink resolution, remote kustomize bases and URLs are refused before any
// network access, and every read is bounded by [Limits]. The package runs no
// external programs and never writes into the repository.
//
// Caching rendered output is the caller's business.
package render
