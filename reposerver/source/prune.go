package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// useTree marks the tree at dir as used now: its directory's modification
// time is what RemoveUnused reads, so it survives a restart.
func useTree(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// RemoveUnused removes the checked-out trees that no Fetch has returned
// for maxIdle: revisions no Application uses any more. The controller calls
// it periodically, which bounds the cache's disk to the trees its
// Applications used within maxIdle (plus each repository's object store).
// A tree is renamed away before it is deleted, so no reader sees it half
// removed; a render that looked its tree up just before its removal fails
// once and the next reconcile fetches it again. It returns how many trees
// it removed.
func (c *Cache) RemoveUnused(ctx context.Context, maxIdle time.Duration) (int, error) {
	trees, err := filepath.Glob(filepath.Join(c.dir, "*", "trees", "*"))
	if err != nil {
		return 0, fmt.Errorf("list trees: %w", err)
	}
	cutoff := time.Now().Add(-maxIdle)
	removed := 0
	var errs []error
	for _, dir := range trees {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		base := filepath.Base(dir)
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || strings.HasPrefix(base, tmpTreePrefix) || !fi.ModTime().Before(cutoff) {
			continue
		}
		gone := filepath.Join(filepath.Dir(dir), tmpTreePrefix+"removed-"+base)
		if err := os.Rename(dir, gone); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove tree %s: %w", dir, err))
			}
			continue
		}
		if err := os.RemoveAll(gone); err != nil {
			errs = append(errs, fmt.Errorf("remove tree %s: %w", dir, err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}
