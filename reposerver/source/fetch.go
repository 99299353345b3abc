package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/go-logr/logr"
	"github.com/tollgate-dev/tollgate/reposerver"
	"k8s.io/utils/clock"
)

// Reference namespace for what Fetch stores that is not a remote branch or
// tag of the same name.
const (
	localHEAD       = plumbing.ReferenceName("refs/tollgate/HEAD")
	localCommitsDir = "refs/tollgate/commits/"
)

// fullFetchSpecs fetch every branch and tag.
var fullFetchSpecs = []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}

// repoEntry is the per-repository state of a Cache.
type repoEntry struct {
	// sem is a one-slot semaphore guarding repo, the directory and the
	// last listing.
	sem  chan struct{}
	dir  string
	repo *git.Repository
	// objects is repo's object cache. It speeds up one fetch or checkout
	// (delta bases, trees) and is emptied after each: the files are on
	// disk by then, and kept between fetches it would hold every blob
	// last checked out, up to go-git's default of 96 MiB per repository.
	objects *cache.ObjectLRU
	// listed is the remote's last reference listing, taken at listedAt.
	listed   []*plumbing.Reference
	listedAt time.Time
	// budget bounds what one fetch writes into repo (MaxFetchBytes).
	budget writeBudget
}

func (c *Cache) entry(key string) *repoEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.repos[key]
	if !ok {
		e = &repoEntry{sem: make(chan struct{}, 1), dir: filepath.Join(c.dir, key)}
		c.repos[key] = e
	}
	return e
}

func (e *repoEntry) lock(ctx context.Context) error {
	select {
	case e.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *repoEntry) unlock() { <-e.sem }

func (e *repoEntry) repoDir() string  { return filepath.Join(e.dir, "repo.git") }
func (e *repoEntry) treesDir() string { return filepath.Join(e.dir, "trees") }

// open opens or creates the bare repository. The caller holds the lock.
func (e *repoEntry) open() (*git.Repository, error) {
	if e.repo != nil {
		return e.repo, nil
	}
	if err := os.MkdirAll(e.treesDir(), 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	// Temporary trees left by a crashed process; we hold the lock, so no
	// live writer owns them.
	if stale, err := filepath.Glob(filepath.Join(e.treesDir(), tmpTreePrefix+"*")); err == nil {
		for _, d := range stale {
			_ = os.RemoveAll(d)
		}
	}
	// As git.PlainOpen and git.PlainInit of a bare repository do, but with
	// an object cache of our own, to empty it (see objects).
	objects := cache.NewObjectLRUDefault()
	st := filesystem.NewStorage(budgetFS{Filesystem: osfs.New(e.repoDir()), budget: &e.budget}, objects)
	r, err := git.Open(st, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		r, err = git.Init(st, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("open cached repository: %w", err)
	}
	e.repo, e.objects = r, objects
	return r, nil
}

// release empties the object cache once a fetch is done. The caller holds
// the lock.
func (e *repoEntry) release() {
	if e.objects != nil {
		e.objects.Clear()
	}
}

// reset deletes the cached repository and starts an empty one. Trees
// already written stay valid.
func (e *repoEntry) reset() (*git.Repository, error) {
	e.repo, e.objects = nil, nil
	if err := os.RemoveAll(e.repoDir()); err != nil {
		return nil, fmt.Errorf("remove cached repository: %w", err)
	}
	return e.open()
}

// Fetch resolves revision in the repository at repoURL and returns the
// commit SHA and a directory holding its files. revision is empty or "HEAD"
// (the remote's default branch), a branch or tag name, a full reference
// name (refs/...), or a full or abbreviated (at least 4 hex digits) commit
// SHA. Names are looked up in the order git rev-parse uses: refs/<name>,
// refs/tags/<name>, refs/heads/<name>; a hex string that names no
// reference is taken as a commit SHA.
//
// A full SHA whose tree is already in the cache is returned without
// contacting the remote. Otherwise Fetch lists the remote's references and
// fetches what is missing; ctx bounds the whole call.
//
// With ListingMaxAge, a reference listing of the same repository taken
// within that age answers instead of a new one: Applications that share a
// repository then cost its server one listing per period, not one each.
func (c *Cache) Fetch(ctx context.Context, repoURL, revision string, creds reposerver.Credentials, opts ...FetchOption) (Checkout, error) {
	var fo fetchOptions
	for _, o := range opts {
		o(&fo)
	}
	revision = strings.TrimSpace(revision)
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.opts.FetchTimeout)
	defer cancel()
	fail := func(err error) (Checkout, error) {
		if ctx.Err() != nil && parent.Err() == nil {
			err = &LimitError{Limit: "time", Value: c.opts.FetchTimeout.String()}
		}
		return Checkout{}, fmt.Errorf("fetch %s at %q: %w", reposerver.RedactURL(repoURL), revision, err)
	}
	// Before anything touches the network or the disk.
	ep, err := c.opts.checkURL(repoURL, creds.Insecure)
	if err != nil {
		return fail(err)
	}
	norm := reposerver.NormalizeURL(repoURL)
	if norm == "" {
		return fail(errors.New("not a Git repository URL"))
	}
	e := c.entry(entryKey(norm, creds.Project))
	// A signature is verified from the commit object, which only the
	// repository holds, not the tree.
	if isFullSHA(revision) && fo.keyring == nil {
		sha := strings.ToLower(revision)
		if dir, ok := existingTree(e, sha); ok {
			useTree(dir)
			return Checkout{Revision: sha, Dir: dir}, nil
		}
	}
	auth, err := authMethod(ctx, creds, ep)
	if err != nil {
		return fail(err)
	}
	if err := e.lock(ctx); err != nil {
		return fail(fmt.Errorf("wait for repository lock: %w", err))
	}
	defer e.unlock()
	defer e.release()
	repo, err := e.open()
	if err != nil {
		return fail(err)
	}
	e.budget.start(c.opts.MaxFetchBytes)
	f := &fetcher{
		entry: e, repo: repo, url: clientURL(repoURL, ep.Protocol), auth: auth, insecure: creds.Insecure,
		shallow: !c.opts.DisableShallow && ep.Protocol != "file", listingMaxAge: fo.listingMaxAge,
		clock: c.opts.Clock, needCommit: fo.keyring != nil, log: logr.FromContextOrDiscard(ctx),
		normURL: norm, requests: c.opts.Requests,
	}
	hash, err := f.resolve(ctx, revision) // every fetch of the call is in here
	if e.budget.stop() {
		err = &LimitError{Limit: "size", Value: fmt.Sprintf("%d MiB", c.opts.MaxFetchBytes>>20)}
	}
	if err != nil {
		return fail(err)
	}
	var sig *reposerver.Signature
	if fo.keyring != nil {
		s, err := verifyCommit(f.repo, hash, fo.keyring)
		if err != nil {
			return fail(fmt.Errorf("verify signature: %w", err))
		}
		sig = &s
	}
	dir, err := c.materialize(ctx, f.repo, e, hash)
	if err != nil {
		return fail(err)
	}
	useTree(dir)
	return Checkout{Revision: hash.String(), Dir: dir, Signature: sig}, nil
}

// clientURL is the URL of a repository as the Git client is given it. An
// http(s) URL loses one trailing slash: git asks for "<url>info/refs"
// after adding a slash only when the URL has none, so Argo CD fetches
// https://host/org/repo.git/ like https://host/org/repo.git, where go-git
// would ask for ".../repo.git//info/refs", which servers refuse.
func clientURL(repoURL, protocol string) string {
	if protocol == schemeHTTP || protocol == schemeHTTPS {
		return strings.TrimSuffix(repoURL, "/")
	}
	return repoURL
}

// fetcher resolves one revision of one repository. The caller holds the
// repository lock.
type fetcher struct {
	entry    *repoEntry
	repo     *git.Repository
	url      string
	auth     transport.AuthMethod
	insecure bool
	shallow  bool
	// listingMaxAge is how old a listing of the entry may be to answer,
	// by clock.
	listingMaxAge time.Duration
	clock         clock.PassiveClock
	// needCommit: the commit object must be in the repository, not only
	// its tree on disk (VerifySignature).
	needCommit bool
	log        logr.Logger
	// normURL is the repository's normalized URL; requests, when set, is
	// told of every request to the server.
	normURL  string
	requests RequestObserver
}

// observe reports a request of requestType that started at start.
func (f *fetcher) observe(requestType string, start time.Time) {
	if f.requests != nil {
		f.requests.ObserveGitRequest(f.normURL, requestType, f.clock.Since(start))
	}
}

// logger returns the context's logger with the repository. It is built on
// use: most fetches log nothing, and the fields would be built every time.
func (f *fetcher) logger() logr.Logger {
	return f.log.WithValues("repo", reposerver.RedactURL(f.url))
}

// FetchOption adjusts one Fetch.
type FetchOption func(*fetchOptions)

type fetchOptions struct {
	listingMaxAge time.Duration
	// keyring, when set, verifies the commit's signature
	// (VerifySignature).
	keyring *Keyring
}

// ListingMaxAge lets Fetch resolve names from the repository's last
// reference listing when it is younger than d, instead of listing the
// remote again. A new commit is then seen up to d later.
func ListingMaxAge(d time.Duration) FetchOption {
	return func(o *fetchOptions) { o.listingMaxAge = d }
}

// resolve returns the commit revision names, fetching it if needed.
func (f *fetcher) resolve(ctx context.Context, revision string) (plumbing.Hash, error) {
	if isFullSHA(revision) {
		h := plumbing.NewHash(strings.ToLower(revision))
		if hasCommit(f.repo, h) {
			return h, nil
		}
	}
	refs, err := f.list(ctx)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if name, want, ok := resolveRef(refs, revision); ok {
		return f.fetchRef(ctx, name, want)
	}
	switch {
	case isFullSHA(revision):
		return f.fetchCommit(ctx, plumbing.NewHash(strings.ToLower(revision)))
	case isShortSHA(revision):
		return f.fetchShort(ctx, refs, strings.ToLower(revision))
	}
	return plumbing.ZeroHash, fmt.Errorf("%w: no branch, tag or reference named %q", ErrRevisionNotFound, revision)
}

// list returns the remote's references with peeled tags (ls-remote), or
// the entry's last listing when it is younger than listingMaxAge.
func (f *fetcher) list(ctx context.Context) ([]*plumbing.Reference, error) {
	if e := f.entry; f.listingMaxAge > 0 && e.listed != nil && f.clock.Since(e.listedAt) < f.listingMaxAge {
		return e.listed, nil
	}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{f.url}})
	start := f.clock.Now()
	refs, err := remote.ListContext(ctx, &git.ListOptions{
		Auth: f.auth, InsecureSkipTLS: f.insecure, PeelingOption: git.AppendPeeled,
	})
	f.observe(RequestLsRemote, start)
	if err != nil {
		return nil, classify(ctx, "list references", err)
	}
	f.entry.listed, f.entry.listedAt = refs, f.clock.Now()
	return refs, nil
}

// fetchRef fetches the remote reference name (whose commit the listing
// says is want) and returns the commit it points to once fetched.
func (f *fetcher) fetchRef(ctx context.Context, name plumbing.ReferenceName, want plumbing.Hash) (plumbing.Hash, error) {
	// A commit whose tree is written was fetched before: as for a full SHA
	// in Fetch, the tree answers without reading the commit from the pack
	// (the common case: a branch that did not move).
	if _, ok := existingTree(f.entry, want.String()); (ok && !f.needCommit) || hasCommit(f.repo, want) {
		return want, nil
	}
	local := name
	if name == plumbing.HEAD {
		local = localHEAD
	}
	spec := config.RefSpec("+" + name.String() + ":" + local.String())
	err := f.fetchWithFallback(ctx, []config.RefSpec{spec}, func() bool {
		_, err := peeledRef(f.repo, local)
		return err == nil
	})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// The reference may have moved since it was listed: the fetched value
	// is the newer truth.
	h, err := peeledRef(f.repo, local)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: %s fetched but not readable: %w", ErrRevisionNotFound, name, err)
	}
	return h, nil
}

// fetchCommit fetches a commit by SHA: directly when the server allows it,
// else by fetching all branches and tags.
func (f *fetcher) fetchCommit(ctx context.Context, h plumbing.Hash) (plumbing.Hash, error) {
	spec := config.RefSpec(h.String() + ":" + localCommitsDir + h.String())
	err := f.fetch(ctx, []config.RefSpec{spec}, f.depth())
	if err == nil && hasCommit(f.repo, h) {
		return h, nil
	}
	if err != nil && isTerminal(ctx, err) {
		return plumbing.ZeroHash, classify(ctx, "fetch commit", err)
	}
	f.logger().V(1).Info("fetching all branches and tags to find a commit", "commit", h.String())
	if err := f.fetchAll(ctx); err != nil {
		return plumbing.ZeroHash, err
	}
	if !hasCommit(f.repo, h) {
		return plumbing.ZeroHash, fmt.Errorf("%w: commit %s is not in any branch or tag", ErrRevisionNotFound, h)
	}
	return h, nil
}

// fetchShort resolves an abbreviated SHA: against the advertised tips
// first, then against every commit of every branch and tag.
func (f *fetcher) fetchShort(ctx context.Context, refs []*plumbing.Reference, prefix string) (plumbing.Hash, error) {
	if name, h, ok := tipWithPrefix(refs, prefix); ok {
		return f.fetchRef(ctx, name, h)
	}
	if h, err := commitWithPrefix(f.repo, prefix); err == nil {
		return h, nil
	} else if !errors.Is(err, ErrRevisionNotFound) {
		return plumbing.ZeroHash, err
	}
	if err := f.fetchAll(ctx); err != nil {
		return plumbing.ZeroHash, err
	}
	return commitWithPrefix(f.repo, prefix)
}

// fetchAll fetches the full history of every branch and tag. A shallow
// cache is rebuilt first: go-git cannot deepen a shallow repository
// reliably, and objects behind its shallow boundary would never be sent.
func (f *fetcher) fetchAll(ctx context.Context) error {
	if shallow, err := f.repo.Storer.Shallow(); err == nil && len(shallow) > 0 {
		f.logger().V(1).Info("rebuilding shallow cached repository for a full fetch")
		repo, err := f.entry.reset()
		if err != nil {
			return err
		}
		f.repo = repo
	}
	if err := f.fetch(ctx, fullFetchSpecs, 0); err != nil {
		return classify(ctx, "fetch all branches and tags", err)
	}
	return nil
}

// fetchWithFallback fetches specs shallowly when allowed, then fully if the
// shallow fetch failed for a reason other than the network or credentials,
// then from an emptied cache if the repository seems damaged. ok reports
// whether the fetch produced what the caller needs.
func (f *fetcher) fetchWithFallback(ctx context.Context, specs []config.RefSpec, ok func() bool) error {
	depth := f.depth()
	err := f.fetch(ctx, specs, depth)
	if err == nil && ok() {
		return nil
	}
	if err != nil && isTerminal(ctx, err) {
		return classify(ctx, "fetch", err)
	}
	if depth != 0 {
		f.logger().V(1).Info("shallow fetch failed, fetching full history", "error", serverText(err))
		err = f.fetch(ctx, specs, 0)
		if err == nil && ok() {
			return nil
		}
		if err != nil && isTerminal(ctx, err) {
			return classify(ctx, "fetch", err)
		}
	}
	f.logger().V(1).Info("fetch failed, rebuilding cached repository", "error", serverText(err))
	repo, rerr := f.entry.reset()
	if rerr != nil {
		return rerr
	}
	f.repo = repo
	if err := f.fetch(ctx, specs, 0); err != nil {
		return classify(ctx, "fetch", err)
	}
	if !ok() {
		return fmt.Errorf("%w: the server did not send %s", ErrRevisionNotFound, specs[0].Src())
	}
	return nil
}

func (f *fetcher) depth() int {
	if f.shallow {
		return 1
	}
	return 0
}

// fetch runs one go-git fetch; "already up to date" is success.
func (f *fetcher) fetch(ctx context.Context, specs []config.RefSpec, depth int) error {
	remote := git.NewRemote(f.repo.Storer, &config.RemoteConfig{Name: "origin", URLs: []string{f.url}})
	start := f.clock.Now()
	defer f.observe(RequestFetch, start)
	err := remote.FetchContext(ctx, &git.FetchOptions{
		RemoteName:      "origin",
		RefSpecs:        specs,
		Depth:           depth,
		Auth:            f.auth,
		Tags:            git.NoTags,
		Force:           true,
		InsecureSkipTLS: f.insecure,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}
