package applicationset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Messages of Argo CD's conditions when all is well.
const (
	appSetParamsGenerated = "Successfully generated parameters for all Applications"
	appSetUpToDate        = "ApplicationSet up to date"
)

// conditions are the three conditions Argo CD sets on every reconcile:
// ErrorOccurred, ParametersGenerated and ResourcesUpToDate.
func (p *appSetPass) conditions() []v1alpha1.ApplicationSetCondition {
	reason, message := p.reason, p.message
	if reason == "" && len(p.invalid)+len(p.denied)+len(p.refused) > 0 {
		// Denials first: they are tollgate's, and name the rule. An
		// Application of another project not adopted is reported as a
		// validation error.
		reason = v1alpha1.ApplicationSetReasonApplicationValidationError
		if len(p.denied) > 0 {
			reason = v1alpha1.ApplicationSetReasonPolicyViolation
		}
		message = strings.Join(slices.Concat(p.denied, p.refused, p.invalid), "\n")
	}
	cond := func(t v1alpha1.ApplicationSetConditionType, s v1alpha1.ApplicationSetConditionStatus, reason, message string) v1alpha1.ApplicationSetCondition {
		return v1alpha1.ApplicationSetCondition{Type: t, Status: s, Reason: reason, Message: message}
	}
	params := cond(v1alpha1.ApplicationSetConditionParametersGenerated, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonParametersGenerated, appSetParamsGenerated)
	if !p.generated {
		params = cond(v1alpha1.ApplicationSetConditionParametersGenerated, v1alpha1.ApplicationSetConditionStatusFalse, v1alpha1.ApplicationSetReasonErrorOccurred, message)
	}
	if reason == "" {
		return []v1alpha1.ApplicationSetCondition{
			cond(v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusFalse, v1alpha1.ApplicationSetReasonApplicationSetUpToDate, appSetParamsGenerated),
			params,
			cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusTrue, v1alpha1.ApplicationSetReasonApplicationSetUpToDate, appSetUpToDate),
		}
	}
	return []v1alpha1.ApplicationSetCondition{
		cond(v1alpha1.ApplicationSetConditionErrorOccurred, v1alpha1.ApplicationSetConditionStatusTrue, reason, message),
		params,
		cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, v1alpha1.ApplicationSetConditionStatusFalse, reason, message),
	}
}

// writeStatus writes the pass's conditions (a condition that did not
// change keeps its transition time) and status.resources, one entry per
// Application the ApplicationSet owns, with its sync and health status,
// and a RollingSync's status.applicationStatus and conditions
// (rolloutStatus).
func (r *Reconciler) writeStatus(ctx context.Context, p *appSetPass) error {
	owned, err := r.owned(ctx, p.set)
	if err != nil {
		return err
	}
	resources := make([]v1alpha1.ResourceStatus, 0, len(owned))
	for _, a := range owned {
		rs := v1alpha1.ResourceStatus{
			Group: v1alpha1.Group, Version: v1alpha1.GroupVersion.Version, Kind: v1alpha1.ApplicationKind,
			Namespace: a.Namespace, Name: a.Name, Status: a.Status.Sync.Status,
		}
		if a.Status.Health.Status != "" {
			rs.Health = &v1alpha1.HealthStatus{Status: a.Status.Health.Status}
		}
		resources = append(resources, rs)
	}
	slices.SortFunc(resources, func(a, b v1alpha1.ResourceStatus) int { return strings.Compare(a.Name, b.Name) })
	conds := p.conditions()
	now := metav1.NewTime(p.now)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var live v1alpha1.ApplicationSet
		if err := r.deps.Client.Get(ctx, client.ObjectKeyFromObject(p.set), &live); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := live.DeepCopy()
		appStatus, rolloutConds := r.rolloutStatus(p, &live)
		want.Status.Conditions = mergeAppSetConditions(live.Status.Conditions, slices.Concat(conds, rolloutConds), now)
		want.Status.ApplicationStatus = nil
		if len(appStatus) > 0 {
			want.Status.ApplicationStatus = appStatus
		}
		want.Status.Resources, want.Status.ResourcesCount = resources, int64(len(resources))
		want.Status.Health = want.Status.CalculateHealth()
		if statusEqual(live.Status, want.Status) {
			return nil
		}
		if err := r.deps.Client.Status().Update(ctx, want); err != nil {
			return fmt.Errorf("update applicationset status: %w", err)
		}
		return nil
	})
}

// mergeAppSetConditions replaces the conditions by next, each keeping its
// transition time when its status, reason and message are the same.
func mergeAppSetConditions(prev, next []v1alpha1.ApplicationSetCondition, now metav1.Time) []v1alpha1.ApplicationSetCondition {
	out := make([]v1alpha1.ApplicationSetCondition, 0, len(next))
	for _, c := range next {
		c.LastTransitionTime = &now
		for _, old := range prev {
			if old.Type == c.Type && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message && old.LastTransitionTime != nil {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	return out
}

// statusEqual compares two statuses, transition times included.
func statusEqual(a, b v1alpha1.ApplicationSetStatus) bool {
	return slices.EqualFunc(a.Conditions, b.Conditions, func(x, y v1alpha1.ApplicationSetCondition) bool {
		return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message &&
			x.LastTransitionTime.Equal(y.LastTransitionTime)
	}) && slices.EqualFunc(a.Resources, b.Resources, func(x, y v1alpha1.ResourceStatus) bool {
		return x.Name == y.Name && x.Namespace == y.Namespace && x.Status == y.Status &&
			(x.Health == nil) == (y.Health == nil) && (x.Health == nil || x.Health.Status == y.Health.Status)
	}) && a.ResourcesCount == b.ResourcesCount && equality.Semantic.DeepEqual(a.ApplicationStatus, b.ApplicationStatus) &&
		a.Health.Status == b.Health.Status && a.Health.Message == b.Health.Message
}
