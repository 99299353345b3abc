package source

import (
	"errors"
	"os"
	"sync/atomic"

	"github.com/go-git/go-billy/v5"
)

// errFetchTooLarge is what a write past the fetch budget returns; Fetch
// reports it as a LimitError.
var errFetchTooLarge = errors.New("fetch passed its size limit")

// writeBudget bounds the bytes written into a repository's object store
// while a fetch runs. Outside a fetch it is inactive and bounds nothing.
type writeBudget struct {
	left     atomic.Int64
	active   atomic.Bool
	exceeded atomic.Bool
}

// start gives the next fetch n bytes.
func (b *writeBudget) start(n int64) {
	b.left.Store(n)
	b.exceeded.Store(false)
	b.active.Store(true)
}

// stop ends the fetch and says whether it passed its budget.
func (b *writeBudget) stop() (exceeded bool) {
	b.active.Store(false)
	return b.exceeded.Load()
}

func (b *writeBudget) take(n int) error {
	if !b.active.Load() {
		return nil
	}
	if b.left.Add(-int64(n)) < 0 {
		b.exceeded.Store(true)
		return errFetchTooLarge
	}
	return nil
}

// budgetFS is the repository's file system with every file it writes
// counted against budget: whatever the transport, a fetch stores what it
// downloads (packfiles, indexes, references) through it.
type budgetFS struct {
	billy.Filesystem
	budget *writeBudget
}

func (fs budgetFS) Create(name string) (billy.File, error) {
	return fs.wrap(fs.Filesystem.Create(name))
}

func (fs budgetFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return fs.wrap(fs.Filesystem.OpenFile(name, flag, perm))
}

func (fs budgetFS) TempFile(dir, prefix string) (billy.File, error) {
	return fs.wrap(fs.Filesystem.TempFile(dir, prefix))
}

func (fs budgetFS) Chroot(path string) (billy.Filesystem, error) {
	sub, err := fs.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return budgetFS{Filesystem: sub, budget: fs.budget}, nil
}

func (fs budgetFS) wrap(f billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return budgetFile{File: f, budget: fs.budget}, nil
}

// budgetFile counts its writes against budget.
type budgetFile struct {
	billy.File
	budget *writeBudget
}

func (f budgetFile) Write(p []byte) (int, error) {
	if err := f.budget.take(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}
