package webhook

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/policies"
)

// StoredReview is the outcome of Review: the decision on a stored object,
// or why it was not judged.
type StoredReview struct {
	// Decision holds the violations; empty when the object passed or was
	// not judged.
	Decision policies.Decision
	// Skipped says why the object was not judged ("" when it was): an
	// exempt namespace, a kind no rule judges on its own and no
	// Application tracks, or an object a workload controller derived from
	// another (judged through its owner).
	Skipped string
}

// Review judges an object the cluster already stores (the audit, enforcement
// point audit) as an admission of it would be judged: the same exempt
// namespaces, the same Application and AppProject lookups, the same rules.
// What a stored object cannot tell is who wrote it, so:
//
//   - no user or group exemption applies, and the tracking metadata of an
//     object lends it none of its project's exemptions (it is claimed, as
//     at admission for anyone but a sync engine);
//   - an object a workload or secret controller derived from an admitted
//     one (a Pod of a ReplicaSet, a ReplicaSet of a Deployment, a Secret of
//     a SealedSecret...: derivedKinds, by its controller owner reference)
//     is not judged: its owner is, and admission exempts those
//     controllers' writes by user. An owner reference to an owner that
//     does not exist is removed by the garbage collector with the object;
//   - an Application's reserved annotations are not judged (the
//     controller writes them);
//   - an AppProject is judged itself; its Applications are judged on their
//     own, so no tightening warnings are computed.
//
// clusterScoped says whether the object's kind is cluster-scoped (from the
// API server's discovery).
func (h *Handler) Review(ctx context.Context, obj map[string]any, clusterScoped bool) (StoredReview, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gk := schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
	ns := stringAt(obj, "metadata", "namespace")
	switch {
	case !clusterScoped && h.exemptNamespaces[ns]:
		return StoredReview{Skipped: "exempt namespace"}, nil
	case unjudgedGroups[gk.Group] || gk.Kind == "Event" && (gk.Group == "" || gk.Group == "events.k8s.io"):
		return StoredReview{Skipped: kind + " is never judged"}, nil
	}
	if owner := derivedFrom(obj, gk); owner != "" {
		return StoredReview{Skipped: "derived from " + owner + ", which is judged itself"}, nil
	}
	var in policies.Input
	switch {
	case gk == v1alpha1.ApplicationGroupVersionKind.GroupKind():
		// The rules judge obj as stored; its typed form names the project.
		app, err := decodeAs[v1alpha1.Application](obj)
		if err != nil {
			return StoredReview{}, fmt.Errorf("decode %s: %w", describeObject(obj), err)
		}
		proj, err := h.getProject(ctx, app.ProjectName())
		if err != nil {
			return StoredReview{}, err
		}
		if in, err = h.inputAt(policies.PointAudit, obj, nil, proj, false); err != nil {
			return StoredReview{}, err
		}
	default:
		app, proj, err := h.ownerAndProject(ctx, obj, clusterScoped)
		if err != nil {
			return StoredReview{}, err
		}
		if app == nil && !judgedKinds[gk] && gk != v1alpha1.AppProjectGroupVersionKind.GroupKind() {
			return StoredReview{Skipped: kind + " is judged only when an Application tracks it"}, nil
		}
		if in, err = h.inputAt(policies.PointAudit, obj, app, proj, clusterScoped); err != nil {
			return StoredReview{}, err
		}
		in.Context.ClaimedApplication = app != nil
	}
	dec, err := h.evaluator().Evaluate(ctx, in)
	if err != nil {
		return StoredReview{}, fmt.Errorf("evaluate %s: %w", describeObject(obj), err)
	}
	return StoredReview{Decision: dec}, nil
}

// derivedKinds are the kinds a controller derives from an owner of another
// kind, owner to child: the workload controllers of kube-controller-manager
// and the secret controllers whose output no-plaintext-secret would
// otherwise report for every sealed or external secret.
var derivedKinds = map[schema.GroupKind][]schema.GroupKind{
	{Group: "apps", Kind: "Deployment"}:                    {{Group: "apps", Kind: "ReplicaSet"}},
	{Group: "apps", Kind: "ReplicaSet"}:                    {{Kind: "Pod"}},
	{Group: "apps", Kind: "StatefulSet"}:                   {{Kind: "Pod"}},
	{Group: "apps", Kind: "DaemonSet"}:                     {{Kind: "Pod"}},
	{Kind: "ReplicationController"}:                        {{Kind: "Pod"}},
	{Group: "batch", Kind: "Job"}:                          {{Kind: "Pod"}},
	{Group: "batch", Kind: "CronJob"}:                      {{Group: "batch", Kind: "Job"}},
	{Group: "bitnami.com", Kind: "SealedSecret"}:           {{Kind: "Secret"}},
	{Group: "external-secrets.io", Kind: "ExternalSecret"}: {{Kind: "Secret"}},
}

// derivedFrom names the controller owner of obj (of kind gk) when that
// owner's kind derives objects of gk (derivedKinds), else "".
func derivedFrom(obj map[string]any, gk schema.GroupKind) string {
	md, _ := obj["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		if controller, _ := ref["controller"].(bool); !controller {
			continue
		}
		apiVersion, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		owner := schema.FromAPIVersionAndKind(apiVersion, kind).GroupKind()
		for _, child := range derivedKinds[owner] {
			if child == gk {
				return kind + "/" + name
			}
		}
	}
	return ""
}

// describeObject names obj as Kind namespace/name for errors.
func describeObject(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	name := stringAt(obj, "metadata", "name")
	if ns := stringAt(obj, "metadata", "namespace"); ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(kind + " " + name)
}
