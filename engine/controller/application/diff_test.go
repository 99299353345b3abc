package application

import "testing"

func TestAppDiffModified(t *testing.T) {
	d := &AppDiff{Objects: []ObjectDiff{{}, {}}}
	if d.Modified() {
		t.Error("in sync: Modified() = true")
	}
	d.Objects[1].Modified = true
	if !d.Modified() {
		t.Error("one object differs: Modified() = false")
	}
}
