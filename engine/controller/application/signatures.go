package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// unsignedError is a render refused because the commit of a Git source is
// not signed with a key the AppProject allows. Its messages are Argo CD's
// ComparisonError messages, one per source refused.
type unsignedError struct {
	messages []string
}

func (e *unsignedError) Error() string { return strings.Join(e.messages, "; ") }

// An AppProject with spec.signatureKeys allows its Applications to sync
// only revisions whose Git commits are signed with one of those keys, as
// Argo CD does. The controller reads argocd-gpg-keys-cm (it has the
// credentials) and sends the keys and the project's key IDs with the
// render request (desired.SignatureCheck); the repo-server, which alone parses a
// tenant's repository, verifies the commit of every Git source as it
// fetches it and renders nothing unless all are signed with an allowed
// key. The controller then refuses with Argo CD's messages (checkSignatures)
// before anything is built, judged or applied: a ComparisonError condition,
// and for a sync operation the phase Error with Argo CD's
// "ComparisonError: …" message. Helm repository and OCI sources are not
// verified (Argo CD verifies Git only); every Git source of a
// multi-source Application is, ref sources included. Unlike Argo CD,
// there is no switch (ARGOCD_GPG_ENABLED) that turns the check off.
//
// checkSignatures returns an *unsignedError when req asked for a
// signature check and resp shows a Git source not signed with an allowed
// key, and an error when the repo-server did not answer the check.
func checkSignatures(req *reposerver.Request, resp *reposerver.Response) error {
	check := req.SignatureCheck
	if check == nil {
		return nil
	}
	if len(resp.Signatures) != len(req.Sources) {
		return fmt.Errorf("verify commit signatures: the repo-server answered %d signatures for %d sources (is it older than the controller?)", len(resp.Signatures), len(req.Sources))
	}
	var msgs []string
	for i, s := range req.Sources {
		if !signatureVerified(s.Source) {
			continue
		}
		if msg := signatureMessage(resp.Revisions[i], resp.Signatures[i], check.Allowed); msg != "" {
			msgs = append(msgs, msg)
		}
	}
	switch {
	case len(msgs) > 0:
		return &unsignedError{messages: msgs}
	case resp.Unverified:
		return errors.New("verify commit signatures: the repo-server refused to render signed revisions")
	}
	return nil
}

// signatureVerified reports whether the commit of src is verified: a Git source,
// not a Helm repository (chart) or OCI source, as in Argo CD.
func signatureVerified(src v1alpha1.ApplicationSource) bool {
	return src.Chart == "" && !strings.HasPrefix(strings.ToLower(src.RepoURL), "oci://")
}

// signatureMessage is Argo CD's ComparisonError message (its controller's
// verifyGnuPGSignature) for revision with sig, "" when sig is a good
// signature made with one of the allowed keys.
func signatureMessage(revision string, sig reposerver.Signature, allowed []string) string {
	switch sig.Status {
	case reposerver.SignatureUnsigned:
		return fmt.Sprintf("Target revision %s in Git is not signed, but a signature is required", revision)
	case reposerver.SignatureGood:
		if sig.SignedBy(allowed) {
			return ""
		}
		return fmt.Sprintf("Found good signature made with %s key %s, but this key is not allowed in AppProject", sig.Algorithm, sig.KeyID)
	case reposerver.SignatureInvalid:
		return fmt.Sprintf("Found signature made with %s key %s, but verification result was invalid: '%s'", sig.Algorithm, sig.KeyID, sig.Reason)
	}
	return fmt.Sprintf("Could not verify commit signature on revision '%s', check logs for more information.", revision)
}

// refuseUnsigned records a render refused for its signatures (err is an
// *unsignedError) and returns its outcomes, none when it was not one: a
// ComparisonError condition, and a requested sync operation ends in the
// phase Error with Argo CD's message ("ComparisonError: …", one per
// source, joined by ";"). Nothing was rendered or applied; the pass ends
// without an error, so the Application is compared again at its next
// resync (a new commit or new keys), not retried with backoff.
func (r *Reconciler) refuseUnsigned(ctx context.Context, p *pass, tg *target, err error) []outcome {
	var ue *unsignedError
	if !errors.As(err, &ue) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Refused: commit not signed with a key the project allows", "operation", tg.op != nil)
	outs := []outcome{failed(ue)}
	if tg.op != nil {
		formatted := make([]string, len(ue.messages))
		for i, m := range ue.messages {
			formatted[i] = v1alpha1.ApplicationConditionComparisonError + ": " + m
		}
		outs = append(outs, r.refuseOperation(p, tg.op, strings.Join(formatted, ";")))
	}
	return outs
}
