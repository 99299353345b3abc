package application

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/metrics"
	"github.com/tollgate-dev/tollgate/reposerver"
)

const (
	keyA = "4AEE18F83AFDEB23"
	keyB = "0123456789ABCDEF"
	shaX = "1111111111111111111111111111111111111111"
	shaY = "2222222222222222222222222222222222222222"
)

func TestCheckSignatures(t *testing.T) {
	git := func(rev string) reposerver.Source {
		return reposerver.Source{Source: v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", TargetRevision: rev}}
	}
	chart := reposerver.Source{Source: v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"}}
	oci := reposerver.Source{Source: v1alpha1.ApplicationSource{RepoURL: "oci://registry.example.com/charts/web", TargetRevision: "1.0.0"}}
	check := &reposerver.SignatureCheck{Keys: map[string]string{keyA: "..."}, Allowed: []string{keyA}}
	good := func(id string) reposerver.Signature {
		return reposerver.Signature{Status: reposerver.SignatureGood, KeyID: id, PrimaryKeyID: id, Algorithm: "RSA"}
	}
	tests := []struct {
		name    string
		check   *reposerver.SignatureCheck
		sources []reposerver.Source
		revs    []string
		sigs    []reposerver.Signature
		// unverified is the repo-server's Unverified.
		unverified bool
		want       []string // the messages of an *unsignedError
		wantErr    string   // another error
	}{
		{name: "no check", sources: []reposerver.Source{git("main")}, revs: []string{shaX}},
		{name: "signed with an allowed key", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX}, sigs: []reposerver.Signature{good(keyA)}},
		{
			name: "unsigned", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			sigs: []reposerver.Signature{{Status: reposerver.SignatureUnsigned}}, unverified: true,
			want: []string{"Target revision " + shaX + " in Git is not signed, but a signature is required"},
		},
		{
			name: "good signature of a key the project does not allow", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			sigs: []reposerver.Signature{good(keyB)}, unverified: true,
			want: []string{"Found good signature made with RSA key " + keyB + ", but this key is not allowed in AppProject"},
		},
		{
			name: "key not in argocd-gpg-keys-cm", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			sigs:       []reposerver.Signature{{Status: reposerver.SignatureInvalid, KeyID: keyB, Algorithm: "EDDSA", Reason: "Can't check signature: No public key"}},
			unverified: true,
			want:       []string{"Found signature made with EDDSA key " + keyB + ", but verification result was invalid: 'Can't check signature: No public key'"},
		},
		{
			name: "bad signature", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			sigs: []reposerver.Signature{{Status: reposerver.SignatureBad, KeyID: keyA, Algorithm: "RSA", Reason: "openpgp: invalid signature"}}, unverified: true,
			want: []string{"Could not verify commit signature on revision '" + shaX + "', check logs for more information."},
		},
		{
			name: "signature that is not OpenPGP", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			sigs: []reposerver.Signature{{Status: reposerver.SignatureUnknown, Reason: "not an OpenPGP signature"}}, unverified: true,
			want: []string{"Could not verify commit signature on revision '" + shaX + "', check logs for more information."},
		},
		{
			name: "every unsigned Git source of several", check: check, sources: []reposerver.Source{git("main"), git("dev"), git("v1")}, revs: []string{shaX, shaY, shaX},
			sigs: []reposerver.Signature{{Status: reposerver.SignatureUnsigned}, good(keyA), {Status: reposerver.SignatureUnsigned}}, unverified: true,
			want: []string{
				"Target revision " + shaX + " in Git is not signed, but a signature is required",
				"Target revision " + shaX + " in Git is not signed, but a signature is required",
			},
		},
		{
			name: "Helm repository and OCI sources are not verified", check: check, sources: []reposerver.Source{chart, oci, git("main")}, revs: []string{"1.0.0", "1.0.0", shaX},
			sigs: []reposerver.Signature{{}, {}, good(keyA)},
		},
		{
			name: "no signatures from the repo-server", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			wantErr: "verify commit signatures: the repo-server answered 0 signatures for 1 sources (is it older than the controller?)",
		},
		{
			name: "refused by the repo-server for no reason the controller sees", check: check, sources: []reposerver.Source{git("main")}, revs: []string{shaX},
			sigs: []reposerver.Signature{good(keyA)}, unverified: true,
			wantErr: "verify commit signatures: the repo-server refused to render signed revisions",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &reposerver.Request{Sources: tt.sources, SignatureCheck: tt.check}
			resp := &reposerver.Response{Revisions: tt.revs, Signatures: tt.sigs, Unverified: tt.unverified}
			err := checkSignatures(req, resp)
			var ue *unsignedError
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr || errors.As(err, &ue) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
			case tt.want != nil:
				if !errors.As(err, &ue) {
					t.Fatalf("error = %v, want an unsignedError", err)
				}
				if diff := cmp.Diff(tt.want, ue.messages); diff != "" {
					t.Errorf("messages (-want +got):\n%s", diff)
				}
			case err != nil:
				t.Fatalf("error = %v, want none", err)
			}
		})
	}
}

// TestRefuseUnsigned: a refused render is a ComparisonError, and ends a
// sync operation in the phase Error with Argo CD's message.
func TestRefuseUnsigned(t *testing.T) {
	ue := &unsignedError{messages: []string{
		"Target revision " + shaX + " in Git is not signed, but a signature is required",
		"Found good signature made with RSA key " + keyB + ", but this key is not allowed in AppProject",
	}}
	r := &Reconciler{metrics: metrics.NewMetrics()}
	op := &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: shaX}}
	p := &pass{app: &v1alpha1.Application{Operation: op}, now: metav1.Now()}
	if outs := r.refuseUnsigned(t.Context(), p, &target{}, errors.New("other")); outs != nil {
		t.Fatalf("another error was taken for a refusal: %v", outs)
	}
	outs := r.refuseUnsigned(t.Context(), p, &target{op: op}, ue)
	if outs == nil {
		t.Fatal("refusal not recorded")
	}
	wantMsg := "ComparisonError: " + ue.messages[0] + ";ComparisonError: " + ue.messages[1]
	conds, _ := applyOutcomes(nil, outs, p.now)
	got := map[string]string{}
	for _, c := range conds {
		got[c.Type] = c.Message
	}
	want := map[string]string{
		v1alpha1.ApplicationConditionComparisonError: ue.messages[0] + "; " + ue.messages[1],
		v1alpha1.ApplicationConditionSyncError:       wantMsg,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	st := p.app.Status.OperationState
	if st == nil || st.Phase != v1alpha1.OperationError || st.Message != wantMsg || p.ranOp == nil {
		t.Errorf("operation state = %+v, want phase Error with %q", st, wantMsg)
	}
}
