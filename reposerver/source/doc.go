// Package source is the first step of the sync engine: it turns an
// Application's repoURL and targetRevision into a commit SHA and a directory
// holding exactly that commit's files.
//
// A Cache keeps one bare clone per repository, keyed by the SHA-256 of the
// normalized URL (reposerver.NormalizeURL), and one immutable directory per commit:
//
//	<dir>/<key>/repo.git        bare repository, fetched into on every call
//	<dir>/<key>/trees/<sha>/    the files of commit <sha>, written once
//
// Fetch lists the remote's references (like git ls-remote), resolves the
// revision (empty or HEAD for the remote's default branch, a branch, a tag,
// a refs/... name, or a full or abbreviated commit SHA), fetches only what it
// needs (depth 1 where the transport allows it, falling back to a full
// fetch), and writes the commit's tree from go-git objects. Files are written
// to a temporary directory that is renamed into place when complete, so a
// tree directory either does not exist or is whole; callers must treat it as
// read-only and may share it. Fetches of one repository are serialized by a
// per-repository lock that honours the context; different repositories are
// fetched in parallel.
//
// Git trees are untrusted input: entry names are checked, total size and
// file count are bounded by Options, and symbolic links that are absolute or
// resolve outside the tree are not written. Submodules are not fetched.
//
// Repository URLs are untrusted input too: a tenant writes them into an
// Application, and the controller fetching them has cluster-admin rights.
// Before anything is read, Fetch applies one scheme policy: https, ssh and
// scp-style addresses are fetched; http and git only with
// Options.AllowInsecure or insecure credentials (the repository Secret's
// insecure key); file only with Options.AllowFile, since it reads the
// controller's disk, other tenants' cached clones included. Local paths,
// git's remote-helper addresses (ext::, fd::) and anything else are
// refused. Credentials from a project-scoped Secret (argocd.MatchCredentials) get
// a clone of their own, so one project's credentials never serve another
// project's Applications from the cache.
//
// With VerifySignature, Fetch also verifies the OpenPGP signature of the
// commit it resolves against a Keyring (Argo CD's argocd-gpg-keys-cm), with
// go-git's commit verification, and reports a reposerver.Signature; the outcome is
// computed on every call, never cached.
//
// Everything runs in process with go-git; the package never executes git.
// For file:// URLs it installs, once per process, go-git's in-process
// server as the file transport instead of go-git's default, which runs
// git-upload-pack.
//
// Errors wrap ErrRepoUnreachable, ErrRepoNotFound, ErrAuthFailed,
// ErrRevisionNotFound, ErrTreeTooLarge, ErrInvalidTree or
// ErrSchemeNotAllowed so the engine can set an Application condition with
// errors.Is. Messages never contain credentials: URLs are printed without
// their user information. What a Git server sent with an error is cut to
// one line of at most 200 characters before it reaches a message or a log.
package source
