package chart

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/tollgate-dev/tollgate/reposerver"
)

// cacheKey names the cache directory of a repository: what was fetched
// with one project's scoped credentials is never served to another.
func cacheKey(repoURL, project string) string {
	h := sha256.Sum256([]byte(reposerver.NormalizeHelmURL(repoURL) + "\x00" + project))
	return hex.EncodeToString(h[:12])
}
