package gitserver

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// SigningKey is an OpenPGP key that signs test commits, as `git commit -S`
// does with a developer's GnuPG key.
type SigningKey struct {
	Entity *openpgp.Entity
	// KeyID is the long key ID (16 upper-case hex digits), Fingerprint
	// the 40-digit fingerprint.
	KeyID, Fingerprint string
	// Public is the ASCII-armored public key, as Argo CD's
	// argocd-gpg-keys-cm holds it.
	Public string
}

// NewSigningKey generates an Ed25519 signing key for name.
func NewSigningKey(t testing.TB, name string) *SigningKey {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", strings.ToLower(name)+"@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatalf("generate key %s: %v", name, err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err == nil {
		err = e.Serialize(w)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatalf("armor key %s: %v", name, err)
	}
	buf.WriteByte('\n')
	return &SigningKey{
		Entity: e, KeyID: fmt.Sprintf("%016X", e.PrimaryKey.KeyId),
		Fingerprint: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint), Public: buf.String(),
	}
}

// CommitSigned is Commit with the commit signed with key.
func (s *Server) CommitSigned(t testing.TB, name string, files map[string]string, msg string, key *SigningKey) string {
	t.Helper()
	return s.commitOn(t, name, DefaultBranch, files, nil, msg, key)
}
