# missing-resources-finalizer: deleting an Application deletes what it
# deployed.
#
# What: an Application without the resources-finalizer.argocd.argoproj.io
# finalizer (or its /foreground or /background form) in
# metadata.finalizers.
# Why: without it, deleting the Application leaves every resource it
# deployed running, unmanaged and unwatched: orphans nobody owns.
# Fix: add "resources-finalizer.argocd.argoproj.io" to metadata.finalizers.
package tollgate.builtin.missing_resources_finalizer

import data.tollgate.lib

finalizers := {
	"resources-finalizer.argocd.argoproj.io",
	"resources-finalizer.argocd.argoproj.io/foreground",
	"resources-finalizer.argocd.argoproj.io/background",
}

violation contains v if {
	input.object.kind == "Application"
	startswith(input.object.apiVersion, "argoproj.io/")
	not has_finalizer
	v := {
		"rule": "missing-resources-finalizer",
		"msg": sprintf(
			"Application %q has no resources-finalizer.argocd.argoproj.io finalizer, so deleting it leaves its resources running unmanaged; add \"resources-finalizer.argocd.argoproj.io\" to metadata.finalizers",
			[lib.display_name(input.object)],
		),
		"path": finalizers_path,
	}
}

has_finalizer if {
	some f in input.object.metadata.finalizers
	f in finalizers
}

finalizers_path := ["metadata", "finalizers"] if {
	is_array(input.object.metadata.finalizers)
} else := ["metadata"]
