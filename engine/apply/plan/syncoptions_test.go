package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSyncOptions(t *testing.T) {
	with := func(f func(*SyncOptions)) SyncOptions {
		o := DefaultSyncOptions()
		f(&o)
		return o
	}
	tests := []struct {
		name string
		opts []string
		want SyncOptions
	}{{
		name: "none",
		want: DefaultSyncOptions(),
	}, {
		name: "every boolean option",
		opts: []string{
			"CreateNamespace=true", "Validate=false", "ServerSideApply=true", "PruneLast=true",
			"Replace=true", "Force=true", "ApplyOutOfSyncOnly=true", "FailOnSharedResource=true",
			"RespectIgnoreDifferences=true", "SkipDryRunOnMissingResource=true",
		},
		want: with(func(o *SyncOptions) {
			o.CreateNamespace, o.Validate, o.ServerSideApply, o.PruneLast = true, false, true, true
			o.Replace, o.Force, o.ApplyOutOfSyncOnly, o.FailOnSharedResource = true, true, true, true
			o.RespectIgnoreDifferences, o.SkipDryRunOnMissingResource = true, true
		}),
	}, {
		name: "prune and delete false",
		opts: []string{"Prune=false", "Delete=false"},
		want: with(func(o *SyncOptions) { o.Prune, o.Delete = false, false }),
	}, {
		name: "prune and delete confirm",
		opts: []string{"Prune=confirm", "Delete=confirm"},
		want: with(func(o *SyncOptions) { o.PruneConfirm, o.DeleteConfirm = true, true }),
	}, {
		name: "later overrides earlier (application then object)",
		opts: []string{"Validate=false", "PrunePropagationPolicy=orphan", "Validate=true", "PrunePropagationPolicy=Background"},
		want: with(func(o *SyncOptions) { o.PrunePropagationPolicy = PropagationBackground }),
	}, {
		name: "spaces and empty items",
		opts: []string{"  CreateNamespace = true ", "", " "},
		want: with(func(o *SyncOptions) { o.CreateNamespace = true }),
	}, {
		name: "client-side apply migration off",
		opts: []string{"ClientSideApplyMigration=false"},
		want: with(func(o *SyncOptions) { o.ClientSideApplyMigration = false }),
	}, {
		name: "unknown keys kept",
		opts: []string{"ServerSideDiff=true", "Foo=bar"},
		want: with(func(o *SyncOptions) { o.Unknown = []string{"ServerSideDiff=true", "Foo=bar"} }),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSyncOptions(tt.opts...)
			if err != nil {
				t.Fatalf("ParseSyncOptions: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSyncOptionsErrors(t *testing.T) {
	tests := []struct {
		opt  string
		want string
	}{
		{"Validate", `parse sync option "Validate": want Key=value`},
		{"Validate=no", `parse sync option "Validate=no": want true or false, got "no"`},
		{"Prune=maybe", `parse sync option "Prune=maybe": want true, false or confirm, got "maybe"`},
		{"PrunePropagationPolicy=cascade", `parse sync option "PrunePropagationPolicy=cascade": want foreground, background or orphan, got "cascade"`},
	}
	for _, tt := range tests {
		t.Run(tt.opt, func(t *testing.T) {
			_, err := ParseSyncOptions(tt.opt)
			if err == nil {
				t.Fatalf("ParseSyncOptions(%q): want error", tt.opt)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncOptionsFor(t *testing.T) {
	o := obj(t, "v1 ConfigMap n/c", AnnotationSyncOptions+"=Prune=false,ServerSideApply=false")
	got, err := SyncOptionsFor(o, "ServerSideApply=true", "CreateNamespace=true")
	if err != nil {
		t.Fatalf("SyncOptionsFor: %v", err)
	}
	want := DefaultSyncOptions()
	want.Prune, want.CreateNamespace = false, true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}
