package source

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// testKey is an OpenPGP key for signing test commits.
type testKey struct {
	entity *openpgp.Entity
	// id is the long key ID, fpr the fingerprint, both upper-case hex.
	id, fpr string
	// public is the ASCII-armored public key.
	public string
}

func newTestKey(t *testing.T, name string, cfg *packet.Config) testKey {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", strings.ToLower(name)+"@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return testKey{entity: e, id: fmt.Sprintf("%016X", e.PrimaryKey.KeyId), fpr: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint), public: buf.String()}
}

// signedRepo is a repository in a temporary directory with a commit
// signed with key A, an unsigned one, one signed with key B, and one whose
// signature (A's) does not match its content, each on its own branch.
type signedRepo struct {
	url                        string
	a, b                       testKey
	signedA, unsigned, signedB string
	tampered                   string
}

func newSignedRepo(t *testing.T) signedRepo {
	t.Helper()
	r := signedRepo{
		a: newTestKey(t, "Alice", nil), // RSA
		b: newTestKey(t, "Bob", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}),
	}
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	commit := func(branch, content string, key *openpgp.Entity) string {
		t.Helper()
		if err := writeWorktreeFile(wt, "app.yaml", content); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add("app.yaml"); err != nil {
			t.Fatal(err)
		}
		when = when.Add(time.Minute)
		h, err := wt.Commit(branch, &git.CommitOptions{Author: &object.Signature{Name: "Dev", Email: "dev@example.com", When: when}, SignKey: key})
		if err != nil {
			t.Fatal(err)
		}
		setBranch(t, repo, branch, h)
		return h.String()
	}
	r.signedA = commit("signed-a", "a: 1\n", r.a.entity)
	r.unsigned = commit("unsigned", "a: 2\n", nil)
	r.signedB = commit("signed-b", "a: 3\n", r.b.entity)

	// A's signature over another message.
	orig, err := repo.CommitObject(plumbing.NewHash(r.signedA))
	if err != nil {
		t.Fatal(err)
	}
	forged := *orig
	forged.Message = "not what was signed"
	obj := repo.Storer.NewEncodedObject()
	if err := forged.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	setBranch(t, repo, "tampered", h)
	r.tampered = h.String()
	r.url = "file://" + filepath.ToSlash(dir)
	return r
}

func setBranch(t *testing.T, repo *git.Repository, branch string, h plumbing.Hash) {
	t.Helper()
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), h)); err != nil {
		t.Fatal(err)
	}
}

func writeWorktreeFile(wt *git.Worktree, name, content string) error {
	f, err := wt.Filesystem.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(content)); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func newKeyring(t *testing.T, keys ...testKey) *Keyring {
	t.Helper()
	m := map[string]string{}
	for _, k := range keys {
		m[k.id] = k.public
	}
	kr, err := NewKeyring(m)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func TestFetchVerifiesSignature(t *testing.T) {
	r := newSignedRepo(t)
	goodA := reposerver.Signature{Status: reposerver.SignatureGood, KeyID: r.a.id, PrimaryKeyID: r.a.id, Algorithm: "RSA"}
	tests := []struct {
		name     string
		revision string
		keyring  *Keyring
		want     reposerver.Signature
	}{
		{"signed with a key of the keyring", "signed-a", newKeyring(t, r.a), goodA},
		{"by full SHA", r.signedA, newKeyring(t, r.a), goodA},
		{"unsigned", "unsigned", newKeyring(t, r.a), reposerver.Signature{Status: reposerver.SignatureUnsigned}},
		{"signed with a key not in the keyring", "signed-b", newKeyring(t, r.a),
			reposerver.Signature{Status: reposerver.SignatureInvalid, KeyID: r.b.id, Algorithm: "EDDSA", Reason: "Can't check signature: No public key"}},
		{"signed with the other key of the keyring", "signed-b", newKeyring(t, r.a, r.b),
			reposerver.Signature{Status: reposerver.SignatureGood, KeyID: r.b.id, PrimaryKeyID: r.b.id, Algorithm: "EDDSA"}},
		{"empty keyring", "signed-a", newKeyring(t),
			reposerver.Signature{Status: reposerver.SignatureInvalid, KeyID: r.a.id, Algorithm: "RSA", Reason: "Can't check signature: No public key"}},
		{"signature of other content", "tampered", newKeyring(t, r.a),
			reposerver.Signature{Status: reposerver.SignatureBad, KeyID: r.a.id, Algorithm: "RSA", Reason: "openpgp: invalid signature: RSA verification failure"}},
	}
	c := newCache(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			co, err := c.Fetch(t.Context(), r.url, tt.revision, reposerver.Credentials{}, VerifySignature(tt.keyring))
			if err != nil {
				t.Fatal(err)
			}
			if co.Signature == nil {
				t.Fatal("Checkout.Signature is nil")
			}
			got := *co.Signature
			if tt.want.Status == reposerver.SignatureGood {
				got.Reason = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("signature (-want +got):\n%s", diff)
			}
		})
	}
	// Without the option nothing is verified.
	co := mustFetch(t, c, r.url, "unsigned", reposerver.Credentials{})
	if co.Signature != nil {
		t.Errorf("Fetch without VerifySignature: reposerver.Signature = %+v, want nil", co.Signature)
	}
}

// TestFetchVerifiesCachedTree: a commit whose tree a Fetch without
// verification already wrote is still verified, from a cache that lost the
// commit object too.
func TestFetchVerifiesCachedTree(t *testing.T) {
	r := newSignedRepo(t)
	c := newCache(t, Options{})
	mustFetch(t, c, r.url, r.unsigned, reposerver.Credentials{})
	e := c.entry(entryKey(reposerver.NormalizeURL(r.url), ""))
	if _, err := e.reset(); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []string{r.unsigned, "unsigned"} {
		co, err := c.Fetch(t.Context(), r.url, rev, reposerver.Credentials{}, VerifySignature(newKeyring(t, r.a)))
		if err != nil {
			t.Fatal(err)
		}
		if co.Signature == nil || co.Signature.Status != reposerver.SignatureUnsigned {
			t.Errorf("Fetch(%q).Signature = %+v, want Unsigned", rev, co.Signature)
		}
	}
}

func TestSignedBy(t *testing.T) {
	const id, sub = "4AEE18F83AFDEB23", "1111222233334444"
	good := reposerver.Signature{Status: reposerver.SignatureGood, KeyID: id, PrimaryKeyID: id}
	tests := []struct {
		name string
		sig  reposerver.Signature
		keys []string
		want bool
	}{
		{"key ID", good, []string{id}, true},
		{"lower-case key ID", good, []string{strings.ToLower(id)}, true},
		{"fingerprint", good, []string{"5DE3E0509C47EA3CF04A42D3" + id}, true},
		{"other key", good, []string{"0123456789ABCDEF"}, false},
		{"short key ID", good, []string{id[8:]}, false},
		{"no keys", good, nil, false},
		{"subkey by its primary key", reposerver.Signature{Status: reposerver.SignatureGood, KeyID: sub, PrimaryKeyID: id}, []string{id}, true},
		{"subkey by its own ID", reposerver.Signature{Status: reposerver.SignatureGood, KeyID: sub, PrimaryKeyID: id}, []string{sub}, true},
		{"not good", reposerver.Signature{Status: reposerver.SignatureInvalid, KeyID: id}, []string{id}, false},
		{"unsigned", reposerver.Signature{Status: reposerver.SignatureUnsigned}, []string{id}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sig.SignedBy(tt.keys); got != tt.want {
				t.Errorf("SignedBy(%v) = %v, want %v", tt.keys, got, tt.want)
			}
		})
	}
}

func TestKeyID(t *testing.T) {
	tests := map[string]string{
		"4AEE18F83AFDEB23":                         "4AEE18F83AFDEB23",
		"4aee18f83afdeb23":                         "4AEE18F83AFDEB23",
		"5DE3E0509C47EA3CF04A42D34AEE18F83AFDEB23": "4AEE18F83AFDEB23",
		"3AFDEB23":                                 "",
		"not a key id!!!!":                         "",
		"":                                         "",
	}
	for in, want := range tests {
		if got := reposerver.KeyID(in); got != want {
			t.Errorf("reposerver.KeyID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewKeyringErrors(t *testing.T) {
	k := newTestKey(t, "Carol", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	tests := []struct {
		name string
		keys map[string]string
		want string
	}{
		{"not armored", map[string]string{"AAAA": "hello"}, "read gnupg key AAAA: no ASCII-armored public key"},
		{"a signature", map[string]string{"BBBB": "-----BEGIN PGP SIGNATURE-----\n\nwsBc\n=AAAA\n-----END PGP SIGNATURE-----\n"}, "read gnupg key BBBB: "},
		{"a good key beside a bad one", map[string]string{k.id: k.public, "CCCC": "x"}, "read gnupg key CCCC: no ASCII-armored public key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewKeyring(tt.keys)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("NewKeyring error = %v, want it to start with %q", err, tt.want)
			}
		})
	}
	// Two keys in one value are both read.
	two := newTestKey(t, "Dave", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	kr, err := NewKeyring(map[string]string{"both": k.public + two.public})
	if err != nil {
		t.Fatal(err)
	}
	list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(kr.armored))
	if err != nil || len(list) != 2 {
		t.Errorf("keyring of two armored blocks: %d keys, %v", len(list), err)
	}
}
