package source

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tollgate-dev/tollgate/reposerver"
	"k8s.io/utils/clock"
)

// Errors wrapped by Fetch, for callers to test with errors.Is.
var (
	// ErrRepoUnreachable: the repository could not be reached (connection
	// refused, DNS, TLS, timeout, server error). A checkout returned
	// earlier is still intact. It is the repo-server's
	// ErrRepoUnreachable, which a client's errors carry too.
	ErrRepoUnreachable = reposerver.ErrRepoUnreachable
	// ErrRepoNotFound: the server answered that the repository does not
	// exist (or hides it from these credentials).
	ErrRepoNotFound = errors.New("repository not found")
	// ErrAuthFailed: credentials were refused, are missing or invalid, or
	// the SSH host key could not be verified.
	ErrAuthFailed = errors.New("authentication failed")
	// ErrRevisionNotFound: the revision names no branch, tag, reference or
	// commit of the repository.
	ErrRevisionNotFound = errors.New("revision not found")
	// ErrTreeTooLarge: the commit's files exceed Options.MaxTreeBytes or
	// Options.MaxFiles.
	ErrTreeTooLarge = errors.New("tree too large")
	// ErrInvalidTree: the commit's tree holds a path that cannot be written
	// safely (such as "..", ".git" or a name with a slash).
	ErrInvalidTree = errors.New("invalid tree")
	// ErrSchemeNotAllowed: the repository URL names a transport the Cache
	// does not fetch from, or one Options or the credentials do not allow
	// (see Options.AllowInsecure). Nothing was read from the network or
	// the disk.
	ErrSchemeNotAllowed = errors.New("scheme not allowed")
)

// Default limits of Options.
const (
	DefaultMaxTreeBytes  int64 = 512 << 20
	DefaultMaxFiles            = 100_000
	DefaultFetchTimeout        = 5 * time.Minute
	DefaultMaxFetchBytes int64 = 1 << 30
)

// Options configures a Cache. A zero field means its default (see
// DefaultOptions).
type Options struct {
	// MaxTreeBytes bounds the total size of the files written for one
	// commit; default 512 MiB.
	MaxTreeBytes int64
	// MaxFiles bounds the number of files, directories and links written
	// for one commit; default 100,000.
	MaxFiles int
	// FetchTimeout bounds one Fetch: the wait for the repository lock, the
	// reference listing, the fetch and the checkout; default 5 minutes. A
	// Git server that trickles bytes costs one fetch, not a worker for ever.
	FetchTimeout time.Duration
	// MaxFetchBytes bounds what one Fetch writes into the repository's
	// object store (packfiles, indexes, references): what a fetch
	// downloads, whatever the transport; default 1 GiB.
	MaxFetchBytes int64
	// DisableShallow fetches full history even where a depth-1 fetch would
	// do.
	DisableShallow bool
	// AllowInsecure allows the unencrypted transports, http:// and git://,
	// for every repository. Without it they are allowed only with
	// credentials whose Insecure is set (insecure: "true" in the
	// repository's Secret). https, ssh and scp-style addresses are always
	// allowed.
	AllowInsecure bool
	// AllowFile allows file:// repositories, which read the controller's
	// own disk (including other repositories' cached clones): for local
	// development and tests only.
	AllowFile bool
	// Clock tells a reference listing's age (ListingMaxAge) and how long
	// a request to a Git server took; default the real clock.
	Clock clock.PassiveClock
	// Requests, when set, is told of every request to a Git server.
	Requests RequestObserver
}

// Types of requests to Git servers, as Argo CD's repo-server names them
// (its argocd_git_request_total's request_type).
const (
	// RequestLsRemote lists a repository's references.
	RequestLsRemote = "ls-remote"
	// RequestFetch fetches objects.
	RequestFetch = "fetch"
)

// RequestObserver is told of the requests a Cache makes to Git servers.
type RequestObserver interface {
	// ObserveGitRequest reports one request of requestType
	// (RequestLsRemote or RequestFetch) to the repository repo, normalized
	// (reposerver.NormalizeURL: no credentials), that took took, failed or
	// not. A listing answered from the cache (ListingMaxAge) is no request.
	ObserveGitRequest(repo, requestType string, took time.Duration)
}

// DefaultOptions returns the options used when none are given.
func DefaultOptions() Options {
	return Options{MaxTreeBytes: DefaultMaxTreeBytes, MaxFiles: DefaultMaxFiles, FetchTimeout: DefaultFetchTimeout, MaxFetchBytes: DefaultMaxFetchBytes}
}

func (o Options) withDefaults() Options {
	if o.MaxTreeBytes <= 0 {
		o.MaxTreeBytes = DefaultMaxTreeBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.MaxFetchBytes <= 0 {
		o.MaxFetchBytes = DefaultMaxFetchBytes
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Checkout is the result of Fetch.
type Checkout struct {
	// Revision is the resolved commit SHA (40 hex digits).
	Revision string
	// Dir is a directory holding exactly the files of Revision. It is
	// shared and must not be modified.
	Dir string
	// Signature is the verification of Revision's signature, set when
	// Fetch was given VerifySignature.
	Signature *reposerver.Signature
}

// Cache fetches Git repositories into a directory and materializes commits.
// It is safe for concurrent use. Two Caches must not share a directory.
type Cache struct {
	dir  string
	opts Options

	mu    sync.Mutex
	repos map[string]*repoEntry
}

// NewCache returns a Cache that keeps its repositories and trees under dir,
// creating dir if needed.
func NewCache(dir string, opts Options) (*Cache, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve cache directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("create cache directory: %w", err)
	}
	return &Cache{dir: abs, opts: opts.withDefaults(), repos: map[string]*repoEntry{}}, nil
}

// Dir returns the cache directory.
func (c *Cache) Dir() string { return c.dir }
