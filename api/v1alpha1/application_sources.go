package v1alpha1

// HasMultipleSources reports whether the spec uses sources rather than
// source. As in Argo CD, a non-empty sources wins over source.
func (s *ApplicationSpec) HasMultipleSources() bool {
	return s != nil && len(s.Sources) > 0
}

// Sources returns the Application's sources: spec.sources when set, else
// spec.source, else none. The result is a deep copy; changing it does not
// change the Application. It is safe on a nil receiver.
func (a *Application) Sources() []ApplicationSource {
	if a == nil {
		return nil
	}
	if a.Spec.HasMultipleSources() {
		out := make([]ApplicationSource, len(a.Spec.Sources))
		for i := range a.Spec.Sources {
			a.Spec.Sources[i].DeepCopyInto(&out[i])
		}
		return out
	}
	if a.Spec.Source != nil {
		return []ApplicationSource{*a.Spec.Source.DeepCopy()}
	}
	return nil
}
