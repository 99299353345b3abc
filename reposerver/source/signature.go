package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// Keyring is a set of OpenPGP public keys commits are verified against.
// It is immutable once built.
type Keyring struct {
	// armored is the keys as one ASCII-armored key block, what go-git's
	// (*object.Commit).Verify takes; "" when there are none.
	armored string
}

// maxKeyBytes bounds one armored key.
const maxKeyBytes = 1 << 20

// NewKeyring reads ASCII-armored OpenPGP public keys by name (the data of
// Argo CD's argocd-gpg-keys-cm: key ID to key). A value may hold several
// armored blocks. A value that holds no key, or one that does not parse,
// is an error naming it.
func NewKeyring(keys map[string]string) (*Keyring, error) {
	var all openpgp.EntityList
	names := make([]string, 0, len(keys))
	for name := range keys {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		data := keys[name]
		if len(data) > maxKeyBytes {
			return nil, fmt.Errorf("read gnupg key %s: larger than %d KiB", name, maxKeyBytes>>10)
		}
		list, err := readArmoredKeys(data)
		if err != nil {
			return nil, fmt.Errorf("read gnupg key %s: %w", name, err)
		}
		all = append(all, list...)
	}
	if len(all) == 0 {
		return &Keyring{}, nil
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		return nil, fmt.Errorf("encode keyring: %w", err)
	}
	for _, e := range all {
		if err := e.Serialize(w); err != nil {
			return nil, fmt.Errorf("encode keyring: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode keyring: %w", err)
	}
	return &Keyring{armored: buf.String()}, nil
}

// readArmoredKeys reads every armored key block of data.
func readArmoredKeys(data string) (openpgp.EntityList, error) {
	var out openpgp.EntityList
	// armor.Decode reads through a bufio.Reader, reusing one it is given:
	// the rest of data is then still there for the next block.
	// A block that does not end its last line would hide the next one.
	data = strings.ReplaceAll(data, "-----BEGIN ", "\n-----BEGIN ")
	r := bufio.NewReader(strings.NewReader(data))
	for {
		block, err := armor.Decode(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if block.Type != openpgp.PublicKeyType {
			return nil, fmt.Errorf("armored block is %q, want %q", block.Type, openpgp.PublicKeyType)
		}
		list, err := openpgp.ReadKeyRing(block.Body)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	if len(out) == 0 {
		return nil, errors.New("no ASCII-armored public key")
	}
	return out, nil
}

// VerifySignature makes Fetch verify the signature of the commit it
// resolves against keyring, with go-git's (*object.Commit).Verify, and
// return the outcome in Checkout.Signature. The commit is read from the
// repository on every call (fetched again if the cache holds only its
// tree): the outcome is never cached, so it always reflects the commit and
// keyring of the call. A commit an annotated tag points to is verified,
// not the tag.
func VerifySignature(keyring *Keyring) FetchOption {
	return func(o *fetchOptions) {
		if keyring == nil {
			keyring = &Keyring{}
		}
		o.keyring = keyring
	}
}

// verifyCommit verifies the signature of commit h of repo against kr.
func verifyCommit(repo *git.Repository, h plumbing.Hash, kr *Keyring) (reposerver.Signature, error) {
	c, err := repo.CommitObject(h)
	if err != nil {
		return reposerver.Signature{}, fmt.Errorf("read commit %s: %w", h, err)
	}
	if strings.TrimSpace(c.PGPSignature) == "" {
		return reposerver.Signature{Status: reposerver.SignatureUnsigned}, nil
	}
	sig, err := readSignature(c.PGPSignature)
	if err != nil {
		return reposerver.Signature{Status: reposerver.SignatureUnknown, Reason: err.Error()}, nil
	}
	out := reposerver.Signature{Algorithm: algorithmName(sig.PubKeyAlgo)}
	switch fp := sig.IssuerFingerprint; {
	case sig.IssuerKeyId != nil:
		out.KeyID = fmt.Sprintf("%016X", *sig.IssuerKeyId)
	case len(fp) == 20: // v4: the key ID ends the fingerprint
		out.KeyID = fmt.Sprintf("%X", fp[12:])
	case len(fp) == 32: // v6: it starts it
		out.KeyID = fmt.Sprintf("%X", fp[:8])
	}
	if kr.armored == "" {
		out.Status, out.Reason = reposerver.SignatureInvalid, noPublicKey
		return out, nil
	}
	signer, err := c.Verify(kr.armored)
	if signer != nil {
		out.PrimaryKeyID = fmt.Sprintf("%016X", signer.PrimaryKey.KeyId)
	}
	var sigErr pgperrors.SignatureError
	switch {
	case err == nil, errors.Is(err, pgperrors.ErrKeyExpired), errors.Is(err, pgperrors.ErrSignatureExpired):
		out.Status = reposerver.SignatureGood
	case errors.Is(err, pgperrors.ErrUnknownIssuer):
		out.Status, out.Reason = reposerver.SignatureInvalid, noPublicKey
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		out.Status, out.Reason = reposerver.SignatureInvalid, "the key was revoked"
	case errors.As(err, &sigErr):
		out.Status, out.Reason = reposerver.SignatureBad, err.Error()
	default:
		out.Status, out.Reason = reposerver.SignatureUnknown, err.Error()
	}
	return out, nil
}

// noPublicKey is gpg's reason for a signature whose key it does not hold.
const noPublicKey = "Can't check signature: No public key"

// readSignature reads the one OpenPGP signature packet of an armored
// signature, for the key that made it.
func readSignature(armored string) (*packet.Signature, error) {
	block, err := armor.Decode(strings.NewReader(armored))
	if err != nil {
		return nil, fmt.Errorf("not an OpenPGP signature: %w", err)
	}
	if block.Type != openpgp.SignatureType {
		return nil, fmt.Errorf("not an OpenPGP signature: armored block is %q", block.Type)
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return nil, fmt.Errorf("read signature: %w", err)
	}
	sig, ok := p.(*packet.Signature)
	if !ok {
		return nil, fmt.Errorf("read signature: packet is %T, not a signature", p)
	}
	return sig, nil
}

// algorithmName names a public-key algorithm as gpg does in "using RSA
// key …".
func algorithmName(a packet.PublicKeyAlgorithm) string {
	switch a {
	case packet.PubKeyAlgoRSA, packet.PubKeyAlgoRSASignOnly, packet.PubKeyAlgoRSAEncryptOnly:
		return "RSA"
	case packet.PubKeyAlgoDSA:
		return "DSA"
	case packet.PubKeyAlgoECDSA:
		return "ECDSA"
	case packet.PubKeyAlgoEdDSA, packet.PubKeyAlgoEd25519, packet.PubKeyAlgoEd448:
		return "EDDSA"
	case packet.PubKeyAlgoElGamal:
		return "ELG"
	}
	return fmt.Sprintf("algorithm %d", a)
}
