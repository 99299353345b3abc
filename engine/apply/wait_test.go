package apply

import (
	"fmt"
	"testing"
)

func TestJudge(t *testing.T) {
	tests := []struct {
		status string
		hook   bool
		want   verdict
	}{
		{HealthHealthy, false, verdictDone},
		{HealthHealthy, true, verdictDone},
		{HealthProgressing, false, verdictWait},
		{HealthProgressing, true, verdictWait},
		{HealthMissing, false, verdictWait},
		{HealthDegraded, false, verdictFailed},
		{HealthDegraded, true, verdictFailed},
		{HealthSuspended, false, verdictDone},
		{HealthSuspended, true, verdictWait},
		{HealthUnknown, false, verdictDone},
		{"", true, verdictDone},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s hook=%v", tt.status, tt.hook), func(t *testing.T) {
			if got := judge(tt.hook, tt.status); got != tt.want {
				t.Errorf("judge(%v, %q) = %v, want %v", tt.hook, tt.status, got, tt.want)
			}
		})
	}
}
