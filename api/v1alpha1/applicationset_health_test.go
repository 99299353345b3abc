package v1alpha1

import "testing"

// TestAppSetHealth: Argo CD 3's health of an ApplicationSet from its
// conditions: an error first, then a rollout in progress, then up to date.
func TestAppSetHealth(t *testing.T) {
	cond := func(typ ApplicationSetConditionType, status ApplicationSetConditionStatus, msg string) ApplicationSetCondition {
		return ApplicationSetCondition{Type: typ, Status: status, Message: msg}
	}
	const (
		yes = ApplicationSetConditionStatusTrue
		no  = ApplicationSetConditionStatusFalse
	)
	for _, tc := range []struct {
		name  string
		conds []ApplicationSetCondition
		want  HealthStatus
	}{
		{"no conditions", nil, HealthStatus{Status: HealthStatusUnknown, Message: "No status conditions found for ApplicationSet"}},
		{"error", []ApplicationSetCondition{cond(ApplicationSetConditionResourcesUpToDate, yes, "ok"), cond(ApplicationSetConditionErrorOccurred, yes, "boom")},
			HealthStatus{Status: HealthStatusDegraded, Message: "boom"}},
		{"rollout", []ApplicationSetCondition{cond(ApplicationSetConditionResourcesUpToDate, yes, "ok"), cond(ApplicationSetConditionRolloutProgressing, yes, "step 1")},
			HealthStatus{Status: HealthStatusProgressing, Message: "step 1"}},
		{"up to date", []ApplicationSetCondition{cond(ApplicationSetConditionErrorOccurred, no, ""), cond(ApplicationSetConditionResourcesUpToDate, yes, "ApplicationSet up to date")},
			HealthStatus{Status: HealthStatusHealthy, Message: "ApplicationSet up to date"}},
		{"nothing true", []ApplicationSetCondition{cond(ApplicationSetConditionResourcesUpToDate, no, "not yet")},
			HealthStatus{Status: HealthStatusUnknown, Message: "Waiting for health status to be determined"}},
	} {
		s := ApplicationSetStatus{Conditions: tc.conds}
		if got := s.CalculateHealth(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
