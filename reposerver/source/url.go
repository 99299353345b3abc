package source

import (
	"crypto/sha256"
	"encoding/hex"
)

// cacheKey is the directory name of a repository in the cache.
func cacheKey(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return hex.EncodeToString(sum[:])
}

// entryKey is the directory name of a repository fetched with the
// credentials of project's project-scoped Secret, or with unscoped (or no)
// credentials when project is empty.
func entryKey(normalized, project string) string {
	if project == "" {
		return cacheKey(normalized)
	}
	return cacheKey(normalized + "\x00project=" + project)
}
