# Pods must not run in the default namespace.
package extra

warn contains msg if {
	input.kind == "Pod"
	msg := sprintf("Pod %q: prefer a Deployment", [input.metadata.name])
}
