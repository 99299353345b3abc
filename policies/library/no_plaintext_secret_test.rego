package tollgate.builtin.no_plaintext_secret_test

import data.tollgate.builtin.no_plaintext_secret

violations(obj, point) := vs if {
	vs := no_plaintext_secret.violation with input as {
		"object": obj,
		"context": {"enforcementPoint": point, "argocdNamespace": "argocd", "clusterScoped": false},
	}
}

secret(extra) := object.union(
	{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-creds", "namespace": "shop"}},
	extra,
)

test_secret_with_data_denied if {
	violations(secret({"data": {"password": "aHVudGVyMg=="}}), "cli") == {{
		"rule": "no-plaintext-secret",
		"msg": `Secret "db-creds" keeps its values in plain text in data (base64 is not encryption); seal it into a SealedSecret (bitnami.com/v1alpha1) with "tollgate seal --cert FILE secret.yaml", or fetch it with an ExternalSecret (external-secrets.io)`,
		"path": ["data"],
	}}
}

test_secret_with_string_data_denied if {
	[v] := [v | some v in violations(secret({"stringData": {"password": "hunter2"}}), "sync")]
	v.path == ["stringData"]
	contains(v.msg, "in stringData")
}

test_secret_with_both_fields_reported_once if {
	vs := violations(secret({"data": {"a": "Yg=="}, "stringData": {"c": "d"}}), "cli")
	{v.path | some v in vs} == {["data"]}
}

test_secret_without_values_allowed[note] if {
	some note, extra in {
		"no data": {},
		"empty data": {"data": {}, "stringData": {}},
		"service account token placeholder": {
			"type": "kubernetes.io/service-account-token",
			"metadata": {"name": "ci-token", "annotations": {"kubernetes.io/service-account.name": "ci"}},
		},
	}
	count(violations(secret(extra), "cli")) == 0
}

owned := {
	"data": {"password": "aHVudGVyMg=="},
	"metadata": {
		"name": "db-creds",
		"ownerReferences": [{"apiVersion": "bitnami.com/v1alpha1", "kind": "SealedSecret", "name": "db-creds", "controller": true}],
	},
}

# Anyone who may create a Secret may set a controller ownerReference, so it
# exempts nothing; controllers are exempted by the webhook's user and group
# exemptions instead.
test_controller_owned_secret_denied_everywhere[point] if {
	some point in ["admission", "cli", "sync"]
	violations(secret(owned), point) == {{
		"rule": "no-plaintext-secret",
		"msg": `Secret "db-creds" keeps its values in plain text in data (base64 is not encryption); seal it into a SealedSecret (bitnami.com/v1alpha1) with "tollgate seal --cert FILE secret.yaml", or fetch it with an ExternalSecret (external-secrets.io)`,
		"path": ["data"],
	}}
}

test_placeholder_secret_allowed_at_admission if {
	count(violations(secret({"type": "kubernetes.io/service-account-token"}), "admission")) == 0
	count(violations(secret({"data": {}}), "admission")) == 0
}

test_other_secret_kinds_ignored[note] if {
	some note, obj in {
		"Secret of another group": {"apiVersion": "example.com/v1", "kind": "Secret", "data": {"a": "b"}},
		"ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"password": "hunter2"}},
		"SecretStore": {"apiVersion": "external-secrets.io/v1", "kind": "SecretStore", "spec": {}},
		"SealedSecret of another group": {"apiVersion": "example.com/v1", "kind": "SealedSecret", "spec": {}},
	}
	count(violations(obj, "cli")) == 0
}

sealed(spec) := {
	"apiVersion": "bitnami.com/v1alpha1",
	"kind": "SealedSecret",
	"metadata": {"name": "db-creds", "namespace": "shop"},
	"spec": spec,
}

test_sealed_secret_allowed if {
	count(violations(sealed({"encryptedData": {"password": "AgBy3i4OJSWK+PiTySYZZA=="}}), "cli")) == 0
}

test_sealed_secret_template_data_allowed if {
	spec := {
		"encryptedData": {"password": "AgBy3i4OJSWK+PiTySYZZA=="},
		"template": {"data": {"user": "admin"}},
	}
	count(violations(sealed(spec), "cli")) == 0
}

test_sealed_secret_without_encrypted_data_denied[note] if {
	some note, spec in {
		"missing": {},
		"empty": {"encryptedData": {}},
		"null": {"encryptedData": null},
		"not an object": {"encryptedData": "AgBy3i4O"},
	}
	violations(sealed(spec), "cli") == {{
		"rule": "no-plaintext-secret",
		"msg": `SealedSecret "db-creds" has no spec.encryptedData, so it unseals into a Secret without values; seal the values with "tollgate seal --cert FILE secret.yaml" and commit the result`,
		"path": ["spec", "encryptedData"],
	}}
}

test_sealed_secret_without_spec_denied if {
	obj := json.remove(sealed({}), ["spec"])
	count(violations(obj, "cli")) == 1
}

test_sealed_secret_bad_values_denied if {
	spec := {"encryptedData": {"ok": "AgBy3i4O", "empty": "", "blank": " ", "number": 7, "null": null}}
	{v.path | some v in violations(sealed(spec), "cli")} == {
		["spec", "encryptedData", "empty"],
		["spec", "encryptedData", "blank"],
		["spec", "encryptedData", "number"],
		["spec", "encryptedData", "null"],
	}
}

test_sealed_secret_bad_value_message if {
	[v] := [v | some v in violations(sealed({"encryptedData": {"password": ""}}), "cli")]
	v.msg == `SealedSecret "db-creds" has no ciphertext for key "password" in spec.encryptedData; seal the value with "tollgate seal --cert FILE secret.yaml" and commit the result`
}

external(spec) := {
	"apiVersion": "external-secrets.io/v1",
	"kind": "ExternalSecret",
	"metadata": {"name": "db-creds", "namespace": "shop"},
	"spec": spec,
}

test_external_secret_allowed[note] if {
	some note, spec in {
		"store and data": {
			"secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"},
			"data": [{"secretKey": "password", "remoteRef": {"key": "db/password"}}],
		},
		"store and dataFrom": {
			"secretStoreRef": {"name": "vault"},
			"dataFrom": [{"extract": {"key": "db"}}],
		},
		"every entry has its own storeRef": {
			"data": [{"secretKey": "password", "remoteRef": {"key": "db"}, "sourceRef": {"storeRef": {"name": "vault", "kind": "SecretStore"}}}],
			"dataFrom": [{"extract": {"key": "db"}, "sourceRef": {"storeRef": {"name": "aws"}}}],
		},
		"generator entry": {"dataFrom": [{"sourceRef": {"generatorRef": {"apiVersion": "generators.external-secrets.io/v1alpha1", "kind": "Password", "name": "pw"}}}]},
	}
	count(violations(external(spec), "cli")) == 0
}

test_external_secret_any_version_checked if {
	obj := object.union(external({}), {"apiVersion": "external-secrets.io/v1beta1"})
	count(violations(obj, "cli")) == 1
}

test_external_secret_entry_without_store_denied if {
	spec := {
		"secretStoreRef": {"kind": "ClusterSecretStore"},
		"data": [
			{"secretKey": "user", "remoteRef": {"key": "db/user"}, "sourceRef": {"storeRef": {"name": "vault"}}},
			{"secretKey": "password", "remoteRef": {"key": "db/password"}},
		],
		"dataFrom": [{"extract": {"key": "db"}, "sourceRef": {"storeRef": {"name": ""}}}],
	}
	vs := violations(external(spec), "cli")
	{v.path | some v in vs} == {["spec", "data", 1], ["spec", "dataFrom", 0]}
	some v in vs
	v.path == ["spec", "data", 1]
	v.msg == `ExternalSecret "db-creds" entry spec.data[1] has no sourceRef and the ExternalSecret has no spec.secretStoreRef.name, so nothing says where to fetch it; set spec.secretStoreRef.name to a SecretStore or ClusterSecretStore, or give the entry a sourceRef.storeRef or sourceRef.generatorRef`
}

test_external_secret_without_store_or_entries_denied[note] if {
	some note, spec in {
		"empty spec": {},
		"empty lists": {"data": [], "dataFrom": []},
		"store without name": {"secretStoreRef": {"name": ""}},
	}
	violations(external(spec), "cli") == {{
		"rule": "no-plaintext-secret",
		"msg": `ExternalSecret "db-creds" has no spec.secretStoreRef.name and no data or dataFrom entries, so it fetches nothing; set spec.secretStoreRef.name to a SecretStore or ClusterSecretStore and list the values in spec.data or spec.dataFrom`,
		"path": ["spec"],
	}}
}
