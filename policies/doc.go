// Package policies owns tollgate's policy evaluator: it compiles the embedded
// built-in Rego library and the user's Rego policies once, and judges one
// object at a time with Evaluate(ctx, Input) (Decision, error).
//
// The same Evaluator serves the three enforcement points: the `tollgate test`
// CLI, the validating admission webhook and the sync engine's gate. Each door
// assembles Inputs (BuildInputs does it for a set of documents), calls
// Evaluate and enforces the Decision.
//
// Built-in rules live in package tollgate.builtin.<name> and see the whole
// Input as `input`. User policies follow conftest's convention: `input` is
// the object itself, and every package that defines deny, violation or warn
// rules (optionally suffixed, e.g. deny_privileged) contributes violations.
// Native Go checks (Options.Checks) join the same pipeline. Every violation
// then goes through the exemptions (exemptions.go: boundary rules only from
// the operator's Config.Exemptions or the AppProject's ExemptAnnotation,
// hygiene rules also from the object's own) and the configured severity
// overrides (Config.Rules).
//
// The package is a leaf: it imports OPA and YAML only, so the CLI works
// offline.
package policies
