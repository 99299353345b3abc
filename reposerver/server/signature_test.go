package server

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestGenerateVerifiesSignatures: with a reposerver.SignatureCheck, the commit of
// every Git source is verified before anything is rendered, over the wire
// as in process, whatever the render cache and the caller's known key
// hold.
func TestGenerateVerifiesSignatures(t *testing.T) {
	f := newFixture(t)
	a, b := gitserver.NewSigningKey(t, "Alice"), gitserver.NewSigningKey(t, "Bob")
	cm := fmt.Sprintf(configMap, "%s")
	signedA := f.srv.CommitSigned(t, "charts", map[string]string{"plain/a.yaml": fmt.Sprintf(cm, "signed-a")}, "signed by A", a)
	unsigned := f.srv.Commit(t, "charts", map[string]string{"plain/a.yaml": fmt.Sprintf(cm, "unsigned")}, "unsigned")
	signedB := f.srv.CommitSigned(t, "charts", map[string]string{"plain/a.yaml": fmt.Sprintf(cm, "signed-b")}, "signed by B", b)
	valuesUnsigned := f.srv.Head(t, "values", gitserver.DefaultBranch)
	valuesSigned := f.srv.CommitSigned(t, "values", map[string]string{"prod.yaml": "region: signed\n"}, "signed values", a)

	onlyA := &reposerver.SignatureCheck{Keys: map[string]string{a.KeyID: a.Public}, Allowed: []string{a.KeyID}}
	bothKnownOnlyA := &reposerver.SignatureCheck{Keys: map[string]string{a.KeyID: a.Public, b.KeyID: b.Public}, Allowed: []string{a.Fingerprint}}
	goodA := reposerver.Signature{Status: reposerver.SignatureGood, KeyID: a.KeyID, PrimaryKeyID: a.KeyID, Algorithm: "EDDSA"}
	at := func(rev string) reposerver.Source {
		s := src(f.charts, "plain")
		s.Source.TargetRevision = rev
		return s
	}
	ref := src(f.values, "")
	ref.Source.Ref = "values"
	tests := []struct {
		name       string
		req        reposerver.Request
		want       []reposerver.Signature
		unverified bool
		objects    []string
	}{
		{
			name: "signed with an allowed key", req: reposerver.Request{Sources: []reposerver.Source{at(signedA)}, SignatureCheck: onlyA},
			want: []reposerver.Signature{goodA}, objects: []string{"signed-a"},
		},
		{
			name: "unsigned", req: reposerver.Request{Sources: []reposerver.Source{at(unsigned)}, SignatureCheck: onlyA},
			want: []reposerver.Signature{{Status: reposerver.SignatureUnsigned}}, unverified: true,
		},
		{
			name: "signed with a key not in the keyring", req: reposerver.Request{Sources: []reposerver.Source{at(signedB)}, SignatureCheck: onlyA},
			want:       []reposerver.Signature{{Status: reposerver.SignatureInvalid, KeyID: b.KeyID, Algorithm: "EDDSA", Reason: "Can't check signature: No public key"}},
			unverified: true,
		},
		{
			name: "signed with a known key the project does not allow", req: reposerver.Request{Sources: []reposerver.Source{at(signedB)}, SignatureCheck: bothKnownOnlyA},
			want:       []reposerver.Signature{{Status: reposerver.SignatureGood, KeyID: b.KeyID, PrimaryKeyID: b.KeyID, Algorithm: "EDDSA"}},
			unverified: true,
		},
		{
			name: "an unsigned ref source", req: reposerver.Request{MultipleSources: true, Sources: []reposerver.Source{at(signedA), withRevision(ref, valuesUnsigned)}, SignatureCheck: onlyA},
			want: []reposerver.Signature{goodA, {Status: reposerver.SignatureUnsigned}}, unverified: true,
		},
		{
			name: "every source signed", req: reposerver.Request{MultipleSources: true, Sources: []reposerver.Source{at(signedA), withRevision(ref, valuesSigned)}, SignatureCheck: onlyA},
			want: []reposerver.Signature{goodA, goodA}, objects: []string{"signed-a"},
		},
		{
			name: "no check", req: reposerver.Request{Sources: []reposerver.Source{at(unsigned)}}, objects: []string{"unsigned"},
		},
	}
	ca := newTestCA(t)
	c := newClient(t, ca, ca.serve(t, "repo.test", NewHandler(f.svc, logr.Discard())))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.renders.n.Load()
			local, err := f.svc.Generate(t.Context(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			remote, err := c.Generate(t.Context(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(local, remote, cmpopts.IgnoreFields(reposerver.Response{}, "Cached", "Rendered")); diff != "" {
				t.Errorf("over the wire (-in process +remote):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, remote.Signatures); diff != "" {
				t.Errorf("signatures (-want +got):\n%s", diff)
			}
			if remote.Unverified != tt.unverified {
				t.Errorf("Unverified = %v, want %v", remote.Unverified, tt.unverified)
			}
			if diff := cmp.Diff(tt.objects, names(t, remote.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if len(remote.Revisions) != len(tt.req.Sources) || len(remote.SourceTypes) != len(tt.req.Sources) {
				t.Errorf("revisions %v and source types %v for %d sources", remote.Revisions, remote.SourceTypes, len(tt.req.Sources))
			}
			if tt.unverified && (f.renders.n.Load() != before || remote.Key != "") {
				t.Errorf("an unverified request rendered %d sources, key %q", f.renders.n.Load()-before, remote.Key)
			}
		})
	}

	// A render of the unsigned commit in the cache, and its key known to
	// the caller, skip neither the verification nor the refusal.
	plain := &reposerver.Request{Sources: []reposerver.Source{at(unsigned)}}
	cached, err := f.svc.Generate(t.Context(), plain)
	if err != nil {
		t.Fatal(err)
	}
	checked := &reposerver.Request{Sources: plain.Sources, KnownKey: cached.Key, SignatureCheck: onlyA}
	resp, err := c.Generate(t.Context(), checked)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Unverified || resp.Unchanged || len(resp.Objects) != 0 {
		t.Errorf("known key of an unsigned commit: unverified %v unchanged %v objects %d, want refused", resp.Unverified, resp.Unchanged, len(resp.Objects))
	}
	// A signed commit the caller holds is answered Unchanged, with its
	// signatures.
	first, err := c.Generate(t.Context(), &reposerver.Request{Sources: []reposerver.Source{at(signedA)}, SignatureCheck: onlyA})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Generate(t.Context(), &reposerver.Request{Sources: []reposerver.Source{at(signedA)}, SignatureCheck: onlyA, KnownKey: first.Key})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Unchanged || len(again.Signatures) != 1 || again.Signatures[0] != goodA {
		t.Errorf("known key of a signed commit: unchanged %v signatures %+v", again.Unchanged, again.Signatures)
	}

	// Keys that do not parse are an invalid request.
	_, err = c.Generate(t.Context(), &reposerver.Request{Sources: []reposerver.Source{at(signedA)}, SignatureCheck: &reposerver.SignatureCheck{Keys: map[string]string{"ABCD": "garbage"}, Allowed: []string{a.KeyID}}})
	if err == nil || err.Error() != "verify commit signatures: read gnupg key ABCD: no ASCII-armored public key" {
		t.Errorf("bad key: %v", err)
	}
}

func withRevision(s reposerver.Source, rev string) reposerver.Source {
	s.Source.TargetRevision = rev
	return s
}
