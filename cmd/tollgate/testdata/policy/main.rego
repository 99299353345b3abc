# ConfigMaps must say which team owns them.
package main

deny contains msg if {
	input.kind == "ConfigMap"
	not input.metadata.labels.team
	msg := sprintf("ConfigMap %q has no team label", [input.metadata.name])
}
