package tollgate.lib_test

import data.tollgate.lib

sha := "sha256:2a3c2b0d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"

test_parse_image[ref] if {
	some ref, want in {
		"nginx": {"name": "nginx", "tag": "", "digest": ""},
		"nginx:1.27": {"name": "nginx", "tag": "1.27", "digest": ""},
		"nginx:latest": {"name": "nginx", "tag": "latest", "digest": ""},
		"library/nginx:1": {"name": "library/nginx", "tag": "1", "digest": ""},
		"localhost:5000/app": {"name": "localhost:5000/app", "tag": "", "digest": ""},
		"localhost:5000/team/app:v2": {"name": "localhost:5000/team/app", "tag": "v2", "digest": ""},
		"registry:5000/app:v1": {"name": "registry:5000/app", "tag": "v1", "digest": ""},
		"[::1]:5000/app:v1": {"name": "[::1]:5000/app", "tag": "v1", "digest": ""},
		"nginx@sha256:abc": {"name": "nginx", "tag": "", "digest": "sha256:abc"},
		"registry:5000/app:v1@sha256:abc": {"name": "registry:5000/app", "tag": "v1", "digest": "sha256:abc"},
		"localhost:5000/app@sha256:abc": {"name": "localhost:5000/app", "tag": "", "digest": "sha256:abc"},
		"nginx:": {"name": "nginx", "tag": "", "digest": ""},
	}
	lib.parse_image(ref) == want
}

test_parse_image_rejects_non_strings if {
	not lib.parse_image(7)
}

test_pinned_by_digest[note] if {
	some note, c in {
		"sha256": {"ref": concat("@", ["nginx", sha]), "want": true},
		"with tag": {"ref": concat("@", ["nginx:1.27", sha]), "want": true},
		"sha512": {"ref": concat("", ["nginx@sha512:", sha_hex, sha_hex]), "want": true},
		"short": {"ref": "nginx@sha256:abc", "want": false},
		"no algorithm": {"ref": concat("@", ["nginx", sha_hex]), "want": false},
		"not hex": {"ref": "nginx@sha256:zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "want": false},
		"tag only": {"ref": "nginx:1.27", "want": false},
	}
	pinned := count({1 | lib.pinned_by_digest(lib.parse_image(c.ref))}) == 1
	pinned == c.want
}

sha_hex := substring(sha, 7, -1)

test_image_pinned[note] if {
	some note, c in {
		"tag": {"ref": "nginx:1.27", "want": true},
		"registry port and tag": {"ref": "registry:5000/app:v1", "want": true},
		"tag containing latest": {"ref": "app:latest-2", "want": true},
		"tag prefix of latest": {"ref": "app:lates", "want": true},
		"one letter tag": {"ref": "app:l", "want": true},
		"tag longer than latest": {"ref": "app:latestx", "want": true},
		"tag differing in case": {"ref": "app:Latest", "want": true},
		"registry port and latest": {"ref": "registry:5000/app:latest", "want": false},
		"digest without tag": {"ref": concat("@", ["registry:5000/app", sha]), "want": true},
		"two digests": {"ref": concat("@", ["nginx", sha, sha]), "want": false},
		"empty digest": {"ref": "nginx:1.0@", "want": false},
		"not a string": {"ref": 7, "want": false},
		"digest": {"ref": concat("@", ["nginx", sha]), "want": true},
		"latest with digest": {"ref": concat("@", ["nginx:latest", sha]), "want": true},
		"no tag": {"ref": "nginx", "want": false},
		"registry port only": {"ref": "localhost:5000/app", "want": false},
		"latest": {"ref": "nginx:latest", "want": false},
		"empty tag": {"ref": "nginx:", "want": false},
		"malformed digest": {"ref": "nginx:1.27@sha256:abc", "want": false},
	}
	pinned := count({1 | lib.image_pinned(c.ref)}) == 1
	pinned == c.want
}
