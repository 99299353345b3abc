{ kind: "ConfigMap" }
