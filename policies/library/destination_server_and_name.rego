# destination-server-and-name: an Application names its cluster once.
#
# What: an Application whose spec.destination sets both server and name.
# Why: Argo CD rejects such an Application ("application destination can't
# have both name and server defined") and syncs nothing.
# Fix: keep only one of spec.destination.server and spec.destination.name.
package tollgate.builtin.destination_server_and_name

import data.tollgate.lib

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	dest := lib.destination_of(input.object)
	dest.server != ""
	dest.name != ""
	v := {
		"rule": "destination-server-and-name",
		"msg": sprintf(
			"Application %q destination sets both server %q and name %q, which Argo CD rejects; keep only one of spec.destination.server and spec.destination.name",
			[lib.display_name(input.object), dest.server, dest.name],
		),
		"path": ["spec", "destination"],
	}
}
