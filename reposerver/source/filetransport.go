package source

import (
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// init replaces go-git's file transport, which runs the git-upload-pack
// binary, with go-git's in-process server reading the repository directly.
// It runs in init because go-git's protocol table is a plain map: changing
// it once any fetch may be running would be a data race. The in-process
// server does not support shallow fetches, so Fetch never asks for depth
// over file://.
func init() {
	client.InstallProtocol("file", server.NewClient(localLoader{}))
}

// localLoader opens the repository at an endpoint's path: a bare
// repository, or a working copy with a .git directory.
type localLoader struct{}

// Load implements server.Loader.
func (localLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	fs := osfs.New(ep.Path, osfs.WithBoundOS())
	if fi, err := fs.Stat(".git"); err == nil && fi.IsDir() {
		dot, err := fs.Chroot(".git")
		if err != nil {
			return nil, err
		}
		return filesystem.NewStorage(dot, cache.NewObjectLRUDefault()), nil
	}
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := fs.Stat(name); err != nil {
			return nil, transport.ErrRepositoryNotFound
		}
	}
	return filesystem.NewStorage(fs, cache.NewObjectLRUDefault()), nil
}
