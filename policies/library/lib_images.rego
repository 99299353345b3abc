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

# pinned_pattern matches a reference with a tag (a ":" followed by no "/"
# up to the end) or a well-formed digest; image_pinned then rejects the tag
# "latest".
pinned_pattern := `^([^@]*:[^/@:]+|[^@]+@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})$`

# image_pinned holds when an image reference names a tag other than
# "latest", or a well-formed digest. The rules call it for every container,
# so it is one regular expression, without parse_image.
image_pinned(ref) if {
	is_string(ref)
	regex.match(pinned_pattern, ref)
	not endswith(ref, ":latest")
}

# pinned_by_digest holds when a parsed image carries a well-formed digest.
pinned_by_digest(image) if regex.match(digest_pattern, image.digest)
