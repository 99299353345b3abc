package v1alpha1

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OwnerOptions says how [OwnerOf] reads an object's tracking metadata. The
// zero value is the sync engine's reading; the admission webhook sets the
// three Label fields, and ClusterScoped for a cluster-scoped object.
//
// The two read differently because a wrong answer costs them opposite
// things. The engine force-applies, adopts and prunes what it finds to be
// an Application's, so in doubt an object is nobody's: a tracking
// annotation decides whenever there is one, under every method (one copied
// from another object, or malformed, makes the object nobody's, whatever
// its label says), and an instance label on an object with owner
// references (a Pod or ReplicaSet inherits the label of its template, not
// the ownership) is not read. The webhook only judges: an object it finds
// to be an Application's is judged against that Application's project,
// and is lent the project's exemptions only when a sync engine wrote it,
// while an object nobody owns is judged by fewer rules or not at all. So it
// reads the metadata the method names, as Argo CD's controller does, and a
// writer cannot shed the Application of a labelled object by adding an
// annotation that does not describe it or an owner reference.
type OwnerOptions struct {
	// ClusterScoped says obj is cluster-scoped: the namespace of its
	// tracking id is not compared. Argo CD may write the Application's
	// destination namespace into the tracking id of a cluster-scoped
	// object, and ignores it when it reads the id back.
	ClusterScoped bool
	// LabelMethodIgnoresAnnotation makes the `label` method read the
	// instance label only, as Argo CD does. Without it, a tracking
	// annotation decides under every method.
	LabelMethodIgnoresAnnotation bool
	// LabelFallback reads the instance label (with the methods that read
	// labels) when the tracking annotation is empty, malformed or does not
	// describe obj. Without it, such an annotation makes obj nobody's.
	LabelFallback bool
	// LabelDespiteOwnerReferences reads the instance label of objects with
	// owner references too.
	LabelDespiteOwnerReferences bool
}

// OwnerOf returns the application instance that tracks obj under method,
// or "" when none does; byLabel says which metadata named it: a label may
// hold a truncated instance name (see [InstanceLabelValue]).
//
// With the zero [OwnerOptions] (the engine's reading), the tracking
// annotation, when obj has one, decides: it must describe obj itself
// ([Describes]). Without it, with the `label` and `annotation+label`
// methods, the instance label names the owner, unless obj has owner
// references. With `annotation` (and an empty method) a label never
// tracks: Helm charts set app.kubernetes.io/instance to their release
// name, and Argo CD ignores the label then too. opts changes this for the
// admission webhook; see [OwnerOptions] for how and why.
func OwnerOf(obj *unstructured.Unstructured, method TrackingMethod, opts OwnerOptions) (app string, byLabel bool) {
	v, annotated := obj.GetAnnotations()[AnnotationKeyTrackingID]
	if annotated && (method != TrackingMethodLabel || !opts.LabelMethodIgnoresAnnotation) {
		id, err := ParseTrackingID(v)
		if err == nil && opts.ClusterScoped {
			id.Namespace = obj.GetNamespace()
		}
		if err == nil && Describes(id, obj) {
			return id.App, false
		}
		if !opts.LabelFallback {
			return "", false
		}
	}
	if !ReadsLabel(method) || (!opts.LabelDespiteOwnerReferences && len(obj.GetOwnerReferences()) > 0) {
		return "", false
	}
	l := obj.GetLabels()[LabelKeyAppInstance]
	return l, l != ""
}

// OwnedBy reports whether obj is tracked by the application instance app
// under method, as the engine reads it ([OwnerOf] with the zero
// [OwnerOptions]): it carries app's tracking id describing obj itself, or,
// without a tracking annotation and with a method that reads labels, app's
// instance label.
func OwnedBy(obj *unstructured.Unstructured, app string, method TrackingMethod) bool {
	owner, byLabel := OwnerOf(obj, method, OwnerOptions{})
	if owner == "" || app == "" {
		return false
	}
	if byLabel {
		return owner == app || owner == InstanceLabelValue(app, method)
	}
	return owner == app
}
