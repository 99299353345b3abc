// Package certs owns the TLS material of tollgate's validating admission
// webhook.
//
// Two ways are supported:
//
//   - Self-managed (Manager): tollgate keeps its own CA and serving
//     certificate in a Secret, rotates them before they expire and writes the
//     CA bundle into the caBundle of every webhook of its
//     ValidatingWebhookConfiguration. Several replicas share the Secret through
//     optimistic concurrency: whoever writes first wins and the others adopt
//     the winner's certificates.
//   - Externally managed (FileWatcher): a certificate mounted from a Secret
//     volume (cert-manager) is reloaded whenever the kubelet swaps the files.
//
// Both serve the current certificate through GetCertificate, which plugs into
// tls.Config, and report readiness once a certificate is loaded.
//
// # Rotation
//
// A certificate is renewed once less than a third of its lifetime remains
// (Options.RotateBefore overrides this with a fixed duration). The CA is
// renewed so that API servers still holding the previous caBundle keep
// trusting the webhook: the new CA goes first in ca.crt and the previous CA
// stays after it until it expires; the serving certificate in use is kept,
// and one renewed in the same pass is still signed by the outgoing CA when
// that CA outlives a full serving certificate. Only the next serving
// certificate is signed by the new CA, months after every API server has seen
// the bundle that contains it. A CA that is unreadable or already expired is
// replaced along with the serving certificate at once.
package certs
