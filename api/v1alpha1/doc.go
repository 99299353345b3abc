// Package v1alpha1 holds tollgate's Go types for Argo CD's argoproj.io/v1alpha1
// Application and AppProject, field-compatible with Argo CD's own types for the
// fields tollgate reads and writes: the JSON names, optionality and the CRD
// schema's required fields match Argo CD's, so an Application written for Argo
// CD is an Application for tollgate and the other way round.
//
// The types model a subset of Argo CD's fields. Every object in the generated
// CRD schemas keeps unknown fields (x-kubernetes-preserve-unknown-fields), so
// fields Argo CD has and tollgate does not model are stored and returned by the
// API server unchanged. Decoding into these Go types, however, drops them:
// code that writes an Application back must patch (a merge patch computed
// from the typed change, or server-side apply of only the fields it owns)
// rather than update the whole object, or it would erase those fields.
//
// Like Argo CD's, the Application CRD has no status subresource: status is
// written with a normal update or patch of the object.
//
// Deepcopy functions and the CRDs in config/crd/bases are generated from these
// types by hack/generate.sh.
//
// # Tracking
//
// The package also holds the one implementation of Argo CD's resource
// tracking, which the engine and the webhook share. Objects an Application
// applies carry the annotation `argocd.argoproj.io/tracking-id`
// ([AnnotationKeyTrackingID]) in Argo CD's format
// `<app>:<group>/<kind>:<namespace>/<name>` ([TrackingID], [SetTracking]). It
// is how pruning finds what an Application owns, and how an object copied by
// hand (same annotation, different identity) is told apart from the original
// ([Describes]). With the tracking methods `label` and `annotation+label`
// ([TrackingMethod]), objects carry the label `app.kubernetes.io/instance`
// ([LabelKeyAppInstance]) as well or instead, and an object without the
// annotation is recognised by that label ([OwnerOf]), so that the objects an
// Argo CD with label tracking left are adopted; the next apply gives them the
// configured method's metadata. The admission webhook reads the same metadata
// differently, for reasons given at [OwnerOptions].
//
// +kubebuilder:object:generate=true
// +groupName=argoproj.io
package v1alpha1
