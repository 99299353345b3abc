package source

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// minShortSHA is the shortest abbreviated SHA accepted, as in git.
const minShortSHA = 4

// maxTagDepth bounds the chain of annotated tags pointing at tags.
const maxTagDepth = 10

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func isFullSHA(s string) bool { return len(s) == 40 && isHex(s) }

func isShortSHA(s string) bool { return len(s) >= minShortSHA && len(s) < 40 && isHex(s) }

// remoteRefs indexes an ls-remote listing.
type remoteRefs struct {
	hashes map[plumbing.ReferenceName]plumbing.Hash
	peeled map[plumbing.ReferenceName]plumbing.Hash // annotated tag -> commit
	head   *plumbing.Reference
}

func indexRefs(refs []*plumbing.Reference) remoteRefs {
	r := remoteRefs{hashes: map[plumbing.ReferenceName]plumbing.Hash{}, peeled: map[plumbing.ReferenceName]plumbing.Hash{}}
	for _, ref := range refs {
		name := ref.Name()
		switch {
		case name == plumbing.HEAD:
			r.head = ref
		case ref.Type() != plumbing.HashReference:
			// Other symbolic references are not advertised in practice.
		case strings.HasSuffix(string(name), "^{}"):
			r.peeled[plumbing.ReferenceName(strings.TrimSuffix(string(name), "^{}"))] = ref.Hash()
		default:
			r.hashes[name] = ref.Hash()
		}
	}
	return r
}

// commit returns the commit a listed reference points to: the peeled value
// of an annotated tag, else the reference's own hash.
func (r remoteRefs) commit(name plumbing.ReferenceName) (plumbing.Hash, bool) {
	if h, ok := r.peeled[name]; ok {
		return h, true
	}
	h, ok := r.hashes[name]
	return h, ok
}

// resolveRef finds revision among the remote's references and returns the
// reference to fetch and the commit it points to.
func resolveRef(refs []*plumbing.Reference, revision string) (plumbing.ReferenceName, plumbing.Hash, bool) {
	r := indexRefs(refs)
	if revision == "" || revision == "HEAD" {
		if r.head == nil {
			return "", plumbing.ZeroHash, false
		}
		if r.head.Type() == plumbing.SymbolicReference {
			target := r.head.Target()
			h, ok := r.commit(target)
			return target, h, ok
		}
		return plumbing.HEAD, r.head.Hash(), true
	}
	candidates := []string{revision}
	if !strings.HasPrefix(revision, "refs/") {
		candidates = []string{"refs/" + revision, "refs/tags/" + revision, "refs/heads/" + revision}
	}
	for _, c := range candidates {
		name := plumbing.ReferenceName(c)
		if h, ok := r.commit(name); ok {
			return name, h, true
		}
	}
	return "", plumbing.ZeroHash, false
}

// tipWithPrefix finds the one advertised commit whose SHA starts with
// prefix, preferring branches for the reference to fetch.
func tipWithPrefix(refs []*plumbing.Reference, prefix string) (plumbing.ReferenceName, plumbing.Hash, bool) {
	r := indexRefs(refs)
	names := make([]plumbing.ReferenceName, 0, len(r.hashes))
	for name := range r.hashes {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		bi, bj := names[i].IsBranch(), names[j].IsBranch()
		if bi != bj {
			return bi
		}
		return names[i] < names[j]
	})
	var found plumbing.Hash
	var foundName plumbing.ReferenceName
	for _, name := range names {
		h, _ := r.commit(name)
		if !strings.HasPrefix(h.String(), prefix) {
			continue
		}
		if foundName != "" && h != found {
			return "", plumbing.ZeroHash, false // ambiguous among tips
		}
		if foundName == "" {
			found, foundName = h, name
		}
	}
	return foundName, found, foundName != ""
}

// commitWithPrefix finds the one local commit whose SHA starts with prefix.
func commitWithPrefix(repo *git.Repository, prefix string) (plumbing.Hash, error) {
	iter, err := repo.CommitObjects()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("list cached commits: %w", err)
	}
	defer iter.Close()
	var found []plumbing.Hash
	err = iter.ForEach(func(c *object.Commit) error {
		if strings.HasPrefix(c.Hash.String(), prefix) {
			found = append(found, c.Hash)
			if len(found) > 1 {
				return storer.ErrStop
			}
		}
		return nil
	})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("list cached commits: %w", err)
	}
	switch len(found) {
	case 0:
		return plumbing.ZeroHash, fmt.Errorf("%w: no commit starts with %s", ErrRevisionNotFound, prefix)
	case 1:
		return found[0], nil
	}
	return plumbing.ZeroHash, fmt.Errorf("%w: %s is ambiguous, use more digits", ErrRevisionNotFound, prefix)
}

func hasCommit(repo *git.Repository, h plumbing.Hash) bool {
	c, err := repo.CommitObject(h)
	if err != nil {
		return false
	}
	_, err = c.Tree()
	return err == nil
}

// peeledRef returns the commit the local reference name points to,
// following annotated tags.
func peeledRef(repo *git.Repository, name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := repo.Reference(name, true)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return peel(repo, ref.Hash())
}

// peel follows annotated tags from h to a commit.
func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range maxTagDepth {
		obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			if !hasCommit(repo, h) {
				return plumbing.ZeroHash, fmt.Errorf("commit %s has no tree", h)
			}
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(repo.Storer, obj)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h = tag.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, errors.New("too many nested tags")
}
