package check

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestForEach(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		failing map[int]bool
		wantErr string
	}{
		{name: "none", n: 0},
		{name: "all succeed", n: 100},
		{name: "lowest failing index wins", n: 100, failing: map[int]bool{70: true, 3: true, 50: true}, wantErr: "item 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := make([]atomic.Bool, tt.n)
			err := forEach(t.Context(), tt.n, func(_ context.Context, i int) error {
				ran[i].Store(true)
				if tt.failing[i] {
					return fmt.Errorf("item %d", i)
				}
				return nil
			})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("error = %q, want %q", got, tt.wantErr)
			}
			// Every index up to the first failure ran.
			limit := tt.n
			for i := range tt.n {
				if tt.failing[i] {
					limit = i
					break
				}
			}
			for i := range limit {
				if !ran[i].Load() {
					t.Errorf("index %d did not run", i)
				}
			}
		})
	}
}

func TestForEachCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var calls atomic.Int32
	err := forEach(ctx, 10, func(context.Context, int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Errorf("forEach on a canceled context = %v after %d calls, want context.Canceled and no calls", err, calls.Load())
	}
}
