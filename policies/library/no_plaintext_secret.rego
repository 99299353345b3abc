# no-plaintext-secret: secrets reach the cluster encrypted or by reference.
#
# What: (a) a core v1 Secret carrying data or stringData; (b) a bitnami.com
# SealedSecret whose spec.encryptedData is missing or empty, or holds a value
# that is not a non-empty string; (c) an external-secrets.io ExternalSecret
# with no spec.secretStoreRef.name and a data or dataFrom entry without its
# own sourceRef (storeRef or generatorRef), or with no entries at all.
# Why: a Secret manifest is base64, not encryption: anyone who can read the
# repository (or the rendered manifests) can read the secret. A SealedSecret
# without ciphertext or an ExternalSecret without a store produces no usable
# Secret, so the workload that needs it fails at runtime instead of in review.
# Fix: seal the Secret with `tollgate seal --cert FILE secret.yaml` (a
# SealedSecret, bitnami.com/v1alpha1) or fetch it from a secret manager with
# an ExternalSecret (external-secrets.io) that names its SecretStore.
#
# A v1 Secret without data and stringData (or with both empty) passes: a
# placeholder, such as a service-account token Secret the cluster fills in,
# holds no secret material.
#
# The rule judges every enforcement point alike. The Secrets that the
# SealedSecret and ExternalSecret controllers write at admission carry data
# by design: exempt those controllers' service accounts with the admission
# webhook's user or group exemptions. The rule cannot tell them apart by
# their content: anyone who may create a Secret may also set
# ownerReferences with controller: true.
package tollgate.builtin.no_plaintext_secret

import data.tollgate.lib

# (a) Plain Secrets.

violation contains v if {
	input.object.kind == "Secret"
	input.object.apiVersion == "v1"
	field := plaintext_field
	v := {
		"rule": "no-plaintext-secret",
		"msg": sprintf(
			"Secret %q keeps its values in plain text in %s (base64 is not encryption); seal it into a SealedSecret (bitnami.com/v1alpha1) with \"tollgate seal --cert FILE secret.yaml\", or fetch it with an ExternalSecret (external-secrets.io)",
			[lib.display_name(input.object), field],
		),
		"path": [field],
	}
}

# plaintext_field is the first of data and stringData that holds values.
plaintext_field := "data" if {
	secret_data("data")
} else := "stringData" if {
	secret_data("stringData")
}

secret_data(field) if {
	values := input.object[field]
	is_object(values)
	count(values) > 0
}

# (b) SealedSecrets without ciphertext.

violation contains v if {
	input.object.kind == "SealedSecret"
	startswith(input.object.apiVersion, "bitnami.com/")
	not has_encrypted_data
	v := {
		"rule": "no-plaintext-secret",
		"msg": sprintf(
			"SealedSecret %q has no spec.encryptedData, so it unseals into a Secret without values; seal the values with \"tollgate seal --cert FILE secret.yaml\" and commit the result",
			[lib.display_name(input.object)],
		),
		"path": ["spec", "encryptedData"],
	}
}

violation contains v if {
	input.object.kind == "SealedSecret"
	startswith(input.object.apiVersion, "bitnami.com/")
	some key, value in input.object.spec.encryptedData
	not lib.non_empty_string(value)
	v := {
		"rule": "no-plaintext-secret",
		"msg": sprintf(
			"SealedSecret %q has no ciphertext for key %q in spec.encryptedData; seal the value with \"tollgate seal --cert FILE secret.yaml\" and commit the result",
			[lib.display_name(input.object), key],
		),
		"path": ["spec", "encryptedData", key],
	}
}

has_encrypted_data if {
	values := input.object.spec.encryptedData
	is_object(values)
	count(values) > 0
}

# (c) ExternalSecrets without a store.

violation contains v if {
	input.object.kind == "ExternalSecret"
	startswith(input.object.apiVersion, "external-secrets.io/")
	not has_store
	some field in ["data", "dataFrom"]
	some i, entry in external_entries(field)
	not has_source_ref(entry)
	v := {
		"rule": "no-plaintext-secret",
		"msg": sprintf(
			"ExternalSecret %q entry spec.%s[%d] has no sourceRef and the ExternalSecret has no spec.secretStoreRef.name, so nothing says where to fetch it; set spec.secretStoreRef.name to a SecretStore or ClusterSecretStore, or give the entry a sourceRef.storeRef or sourceRef.generatorRef",
			[lib.display_name(input.object), field, i],
		),
		"path": ["spec", field, i],
	}
}

violation contains v if {
	input.object.kind == "ExternalSecret"
	startswith(input.object.apiVersion, "external-secrets.io/")
	not has_store
	count(external_entries("data")) + count(external_entries("dataFrom")) == 0
	v := {
		"rule": "no-plaintext-secret",
		"msg": sprintf(
			"ExternalSecret %q has no spec.secretStoreRef.name and no data or dataFrom entries, so it fetches nothing; set spec.secretStoreRef.name to a SecretStore or ClusterSecretStore and list the values in spec.data or spec.dataFrom",
			[lib.display_name(input.object)],
		),
		"path": ["spec"],
	}
}

has_store if lib.non_empty_string(input.object.spec.secretStoreRef.name)

external_entries(field) := entries if {
	entries := input.object.spec[field]
	is_array(entries)
} else := []

has_source_ref(entry) if lib.non_empty_string(entry.sourceRef.storeRef.name)

has_source_ref(entry) if lib.non_empty_string(entry.sourceRef.generatorRef.name)
