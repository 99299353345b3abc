package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is wgpolicyk8s.io/v1alpha2.
var GroupVersion = schema.GroupVersion{Group: "wgpolicyk8s.io", Version: "v1alpha2"}

var (
	// SchemeBuilder registers PolicyReport and ClusterPolicyReport and
	// their lists with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&PolicyReport{}, &PolicyReportList{},
		&ClusterPolicyReport{}, &ClusterPolicyReportList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
