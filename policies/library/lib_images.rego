# Container image references.
#
# A reference is [registry[:port]/]path[:tag][@digest]. The tag is what
# follows the last ":" only when that ":" comes after the last "/", so
# "localhost:5000/app" has no tag (5000 is a port) while
# "registry:5000/app:v1" has the tag "v1".
package tollgate.lib

# digest_pattern is a content digest as the distribution reference grammar
# defines it: algorithm ":" at least 32 hex digits (sha256:<64 hex>).
digest_pattern := `^[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`

# parse_image splits an image reference into
# {"name": ..., "tag": ..., "digest": ...}; tag and digest are "" when absent.
# parse_image("registry:5000/app:v1@sha256:abc") is
# {"name": "registry:5000/app", "tag": "v1", "digest": "sha256:abc"}.
parse_image(ref) := {"name": name, "tag": tag, "digest": digest} if {
	is_string(ref)
	parts := split(ref, "@")
	digest := concat("@", array.slice(parts, 1, count(parts)))
	segments := split(parts[0], "/")
	n := count(segments)
	[last, tag] := split_tag(segments[n - 1])
	name := concat("/", array.concat(array.slice(segments, 0, n - 1), [last]))
}

# split_tag splits the last path segment of a reference at its ":".
split_tag(segment) := [substring(segment, 0, i), substring(segment, i + 1, -1)] if {
	i := indexof(segment, ":")
	i >= 0
} else := [segment, ""]

# pinned_pattern matches exactly the pinned image references: a tag other
# than "latest" and no digest, or one well-formed digest (whatever the tag):
#
#   - a tag: text without "@", a ":", then _tag_not_latest, one or more
#     characters other than "/", "@" and ":" that do not spell "latest" (a
#     ":" followed by a "/" is a registry port, not a tag);
#   - a digest: text without "@", an "@", then _digest.
pinned_pattern := concat("", ["^(?:[^@]*:", _tag_not_latest, "|[^@]+@", _digest, ")$"])

# _tag_not_latest is a tag that is not "latest", spelled out letter by
# letter: it leaves "latest" after any proper prefix of it ("l", "la", ...,
# "lates"), or goes on past it ("latest-2").
_tag_not_latest := concat("", [
	"(?:[^/@:l][^/@:]*|l(?:[^/@:a][^/@:]*|a(?:[^/@:t][^/@:]*|t(?:[^/@:e][^/@:]*",
	"|e(?:[^/@:s][^/@:]*|s(?:[^/@:t][^/@:]*|t[^/@:]+)?)?)?)?)?)",
])

# _digest is digest_pattern without its anchors.
_digest := `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`

# image_pinned holds when an image reference names a tag other than
# "latest", or a well-formed digest. The rules call it for every container,
# so it is one regular expression, written out: the value of pinned_pattern
# (a rule reference would cost an evaluation; library_test.go checks that
# the two agree).
image_pinned(ref) if {
	is_string(ref)
	regex.match(`^(?:[^@]*:(?:[^/@:l][^/@:]*|l(?:[^/@:a][^/@:]*|a(?:[^/@:t][^/@:]*|t(?:[^/@:e][^/@:]*|e(?:[^/@:s][^/@:]*|s(?:[^/@:t][^/@:]*|t[^/@:]+)?)?)?)?)?)|[^@]+@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})$`, ref)
}

# pinned_by_digest holds when a parsed image carries a well-formed digest.
pinned_by_digest(image) if regex.match(digest_pattern, image.digest)
