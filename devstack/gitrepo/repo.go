package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Branch is the branch Import creates and points HEAD at, and the branch
// Commit and Revert commit to.
const Branch = "main"

var (
	mainRef   = plumbing.NewBranchReferenceName(Branch)
	originRef = plumbing.ReferenceName("refs/remotes/origin/" + Branch)
)

// ErrNothingToCommit is returned (wrapped) by Commit and Revert when the
// change would leave main's tree as it is, as git refuses an empty commit.
var ErrNothingToCommit = errors.New("nothing to commit")

// The author and committer of every commit a Repo makes.
const (
	authorName  = "tollgate dev"
	authorEmail = "dev@tollgate.invalid"
)

// Repo commits to a repository served by a Server. Its methods are safe for
// concurrent use; commits are made one at a time.
type Repo struct {
	name string
	url  string
	bare string // directory of the bare repository

	mu   sync.Mutex
	work *gogit.Repository // in memory, no worktree: origin is the Server
	now  func() time.Time
	last time.Time // time of the last commit made
}

// Import creates the bare repository <root>/<name>.git, with HEAD pointing
// to refs/heads/main and http.receivepack set so that users can push to it,
// and returns a Repo that commits to it. The first commit, with message msg,
// holds every file under dir with its executable bit, each passed through
// rewrite (nil leaves files unchanged), which gets the slash-separated path
// relative to dir and the content and returns the content to commit.
//
// baseURL is where a Server for root is reachable, such as
// http://127.0.0.1:18080; the commit is pushed there over HTTP, so the
// Server must be serving already. The repository must not exist.
//
// Nothing is skipped silently: a symbolic link, a special file or a .git
// entry under dir is an error naming its path. Empty directories are not
// committed, since Git only stores files.
func Import(ctx context.Context, root, baseURL, name, dir string, rewrite func(path string, data []byte) []byte, msg string) (*Repo, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	work, err := gogit.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, fmt.Errorf("import %s: init working repository: %w", dir, err)
	}
	files, err := readDir(work.Storer, dir, rewrite)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	r := &Repo{
		name: name,
		url:  strings.TrimRight(baseURL, "/") + "/" + name + ".git",
		bare: filepath.Join(root, name+".git"),
		work: work,
		now:  time.Now,
	}
	if _, err := work.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.url}}); err != nil {
		return nil, fmt.Errorf("import %s: add remote %s: %w", dir, r.url, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	if err := os.Mkdir(r.bare, 0o755); err != nil {
		return nil, fmt.Errorf("import %s: create repository: %w", dir, err)
	}
	if err := initBare(r.bare); err != nil {
		_ = os.RemoveAll(r.bare)
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	if _, err := r.commit(ctx, plumbing.ZeroHash, files, msg); err != nil {
		_ = os.RemoveAll(r.bare)
		return nil, fmt.Errorf("import %s: %w", dir, err)
	}
	return r, nil
}

// initBare initializes the bare repository in the empty directory dir.
func initBare(dir string) error {
	repo, err := gogit.PlainInitWithOptions(dir, &gogit.PlainInitOptions{
		InitOptions: gogit.InitOptions{DefaultBranch: mainRef},
		Bare:        true,
	})
	if err != nil {
		return fmt.Errorf("init bare repository %s: %w", dir, err)
	}
	cfg, err := repo.Config()
	if err != nil {
		return fmt.Errorf("read config of %s: %w", dir, err)
	}
	// git http-backend accepts anonymous pushes only with this set.
	cfg.Raw.Section("http").SetOption("receivepack", "true")
	if err := repo.SetConfig(cfg); err != nil {
		return fmt.Errorf("write config of %s: %w", dir, err)
	}
	return nil
}

// readDir writes every file under dir to st as a blob and returns the tree
// of them.
func readDir(st storer.EncodedObjectStorer, dir string, rewrite func(string, []byte) []byte) (tree, error) {
	// The directory named may be a link; what is under it is not followed.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("read directory: %w", err)
	}
	out := tree{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			if !d.IsDir() {
				return fmt.Errorf("%s is not a directory", dir)
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		shown := filepath.Join(dir, rel)
		switch t := d.Type(); {
		case strings.EqualFold(d.Name(), ".git"):
			return fmt.Errorf("%s: Git cannot commit a .git entry", shown)
		case t.IsDir():
			return nil
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: replace it with a copy of its target", shown)
		case !t.IsRegular():
			return fmt.Errorf("%s is not a regular file", shown)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if rewrite != nil {
			data = rewrite(name, data)
		}
		h, err := writeBlob(st, data)
		if err != nil {
			return fmt.Errorf("store %s: %w", shown, err)
		}
		mode := filemode.Regular
		if isExecutable(info.Mode()) {
			mode = filemode.Executable
		}
		out[name] = entry{mode: mode, hash: h}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no files", dir)
	}
	return out, nil
}

// URL returns the HTTP URL of the repository: baseURL/<name>.git.
func (r *Repo) URL() string { return r.url }

// Head returns the SHA main points to in the bare repository, which
// reflects pushes by anyone, or "" when main cannot be read.
func (r *Repo) Head() string {
	st := filesystem.NewStorage(osfs.New(r.bare), cache.NewObjectLRUDefault())
	defer st.Close()
	ref, err := storer.ResolveReference(st, mainRef)
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// Commit writes files (slash-separated path relative to the repository root
// to content; a file already committed as executable stays executable) and
// removes the files in del, on top of main as the Server has it, commits
// with message msg and pushes. It returns the SHA of the new commit. Paths
// must be relative and clean, without "..", "." or .git elements; deleting
// a file that does not exist is an error, and so is a change that leaves the
// tree as it is (ErrNothingToCommit). If someone else pushes to main between
// Commit's fetch and its push, the push is rejected and Commit returns the
// error.
func (r *Repo) Commit(ctx context.Context, files map[string][]byte, del []string, msg string) (string, error) {
	sha, err := r.commitChanges(ctx, files, del, msg)
	if err != nil {
		return "", fmt.Errorf("commit to %s: %w", r.name, err)
	}
	return sha, nil
}

func (r *Repo) commitChanges(ctx context.Context, files map[string][]byte, del []string, msg string) (string, error) {
	for p := range files {
		if err := checkPath(p); err != nil {
			return "", err
		}
	}
	for _, p := range del {
		if err := checkPath(p); err != nil {
			return "", err
		}
		if _, ok := files[p]; ok {
			return "", fmt.Errorf("path %q is both written and deleted", p)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	parent, t, err := r.fetchMain(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range del {
		if _, ok := t[p]; !ok {
			return "", fmt.Errorf("delete %s: no such file on %s", p, Branch)
		}
		delete(t, p)
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		h, err := writeBlob(r.work.Storer, files[p])
		if err != nil {
			return "", fmt.Errorf("store %s: %w", p, err)
		}
		mode := filemode.Regular
		if old, ok := t[p]; ok && old.mode == filemode.Executable {
			mode = filemode.Executable
		}
		t[p] = entry{mode: mode, hash: h}
	}
	return r.commit(ctx, parent, t, msg)
}

// Revert commits the reverse of commit sha (a full SHA reachable from main)
// on top of main and pushes, like `git revert --no-edit sha`: each path sha
// changed gets back the content and mode it had in sha's parent (or is
// removed if it did not exist there). A path changed since sha in another
// way is a conflict, and Revert fails naming it; a merge commit cannot be
// reverted; reverting a change already undone is ErrNothingToCommit. The
// message is git's: `Revert "<subject>"`, a blank line and
// "This reverts commit <sha>.". Revert returns the SHA of the new commit.
func (r *Repo) Revert(ctx context.Context, sha string) (string, error) {
	newSHA, err := r.revert(ctx, sha)
	if err != nil {
		return "", fmt.Errorf("revert %s in %s: %w", sha, r.name, err)
	}
	return newSHA, nil
}

func (r *Repo) revert(ctx context.Context, sha string) (string, error) {
	if !plumbing.IsHash(sha) {
		return "", errors.New("not a full commit SHA")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	head, current, err := r.fetchMain(ctx)
	if err != nil {
		return "", err
	}
	c, err := r.work.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return "", fmt.Errorf("read commit: %w", err)
	}
	before := tree{}
	switch c.NumParents() {
	case 0: // the root commit: its parent is the empty tree
	case 1:
		p, err := c.Parent(0)
		if err != nil {
			return "", fmt.Errorf("read parent: %w", err)
		}
		if err := flatten(r.work.Storer, p.TreeHash, "", before); err != nil {
			return "", err
		}
	default:
		return "", errors.New("cannot revert a merge commit")
	}
	after := tree{}
	if err := flatten(r.work.Storer, c.TreeHash, "", after); err != nil {
		return "", err
	}
	var conflicts []string
	for _, p := range changedPaths(before, after) {
		old, inOld := before[p]
		changed, inChanged := after[p]
		cur, inCur := current[p]
		switch {
		case inCur == inChanged && cur == changed: // as sha left it: undo
			if inOld {
				current[p] = old
			} else {
				delete(current, p)
			}
		case inCur == inOld && cur == old: // already undone
		default:
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) > 0 {
		return "", fmt.Errorf("conflict: changed on %s since: %s", Branch, strings.Join(conflicts, ", "))
	}
	msg := "Revert \"" + subject(c.Message) + "\"\n\nThis reverts commit " + c.Hash.String() + ".\n"
	return r.commit(ctx, head, current, msg)
}

// fetchMain fetches main from the Server and returns its commit and tree.
func (r *Repo) fetchMain(ctx context.Context) (plumbing.Hash, tree, error) {
	err := r.work.FetchContext(ctx, &gogit.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec("+" + mainRef + ":" + originRef)},
		Tags:       gogit.NoTags,
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return plumbing.ZeroHash, nil, fmt.Errorf("fetch %s from %s: %w", Branch, r.url, err)
	}
	ref, err := r.work.Reference(originRef, true)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("fetch %s from %s: %w", Branch, r.url, err)
	}
	c, err := r.work.CommitObject(ref.Hash())
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("read %s: %w", Branch, err)
	}
	t := tree{}
	if err := flatten(r.work.Storer, c.TreeHash, "", t); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return c.Hash, t, nil
}

// commit commits t on top of parent (none if zero) with msg, points main
// at it and pushes main. The caller holds r.mu.
func (r *Repo) commit(ctx context.Context, parent plumbing.Hash, t tree, msg string) (string, error) {
	msg = cleanMessage(msg)
	if msg == "" {
		return "", errors.New("empty commit message")
	}
	st := r.work.Storer
	treeHash, err := writeTree(st, t)
	if err != nil {
		return "", err
	}
	c := &object.Commit{Message: msg, TreeHash: treeHash}
	if !parent.IsZero() {
		p, err := r.work.CommitObject(parent)
		if err != nil {
			return "", fmt.Errorf("read parent: %w", err)
		}
		if p.TreeHash == treeHash {
			return "", ErrNothingToCommit
		}
		c.ParentHashes = []plumbing.Hash{parent}
	}
	sig := r.signature()
	c.Author, c.Committer = sig, sig
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", fmt.Errorf("encode commit: %w", err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return "", fmt.Errorf("store commit: %w", err)
	}
	if err := st.SetReference(plumbing.NewHashReference(mainRef, h)); err != nil {
		return "", fmt.Errorf("update %s: %w", Branch, err)
	}
	err = r.work.PushContext(ctx, &gogit.PushOptions{
		RemoteName: "origin",
		RefSpecs:   []config.RefSpec{config.RefSpec(mainRef + ":" + mainRef)},
	})
	if err != nil {
		return "", fmt.Errorf("push %s to %s: %w", Branch, r.url, err)
	}
	return h.String(), nil
}

// signature returns the author of a new commit, dated now but strictly
// after the previous commit (Git dates have a resolution of a second).
func (r *Repo) signature() object.Signature {
	when := r.now().Truncate(time.Second)
	if !when.After(r.last) {
		when = r.last.Add(time.Second)
	}
	r.last = when
	return object.Signature{Name: authorName, Email: authorEmail, When: when}
}

// cleanMessage cleans a commit message as `git commit -m` does: trailing
// whitespace, leading and trailing blank lines and repeated blank lines
// removed, and a final newline.
func cleanMessage(msg string) string {
	var b strings.Builder
	blank := false
	for line := range strings.SplitSeq(msg, "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteString("\n")
			blank = false
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// subject returns the first line of a commit message that is not blank, as
// git's revert quotes it.
func subject(msg string) string {
	for line := range strings.SplitSeq(msg, "\n") {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

// checkPath checks a path given to Commit.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute: want a slash-separated path relative to the repository root", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q holds a NUL byte", p)
	}
	for elem := range strings.SplitSeq(p, "/") {
		switch {
		case elem == "..":
			return fmt.Errorf("path %q leaves the repository", p)
		case elem == "" || elem == ".":
			return fmt.Errorf("path %q is not clean: want a slash-separated path relative to the repository root", p)
		case strings.EqualFold(elem, ".git"):
			return fmt.Errorf("path %q has a .git element, which Git cannot commit", p)
		}
	}
	return nil
}

// checkName checks that a repository name is one path element that git
// http-backend serves.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty repository name")
	case strings.ContainsAny(name, `/\`), strings.HasPrefix(name, "."):
		return fmt.Errorf("invalid repository name %q: want one path element not starting with a dot", name)
	}
	return nil
}

// isExecutable reports whether a file in the directory Import reads is
// committed as executable, like Git does: any execute bit.
func isExecutable(mode fs.FileMode) bool { return mode.Perm()&0o111 != 0 }
