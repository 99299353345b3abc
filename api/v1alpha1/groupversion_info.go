package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is Argo CD's API group.
const Group = "argoproj.io"

// Version is the only version of Argo CD's Application and AppProject APIs.
const Version = "v1alpha1"

var (
	// GroupVersion is argoproj.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers Application, AppProject and ApplicationSet and
	// their lists with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource and kind names, for RBAC rules, REST mappings and messages.
const (
	ApplicationKind        = "Application"
	ApplicationListKind    = "ApplicationList"
	ApplicationResource    = "applications"
	AppProjectKind         = "AppProject"
	AppProjectListKind     = "AppProjectList"
	AppProjectResource     = "appprojects"
	ApplicationSetKind     = "ApplicationSet"
	ApplicationSetListKind = "ApplicationSetList"
	ApplicationSetResource = "applicationsets"
)

// ApplicationGroupVersionKind is the GroupVersionKind of Application.
var ApplicationGroupVersionKind = GroupVersion.WithKind(ApplicationKind)

// AppProjectGroupVersionKind is the GroupVersionKind of AppProject.
var AppProjectGroupVersionKind = GroupVersion.WithKind(AppProjectKind)

// ApplicationSetGroupVersionKind is the GroupVersionKind of ApplicationSet.
var ApplicationSetGroupVersionKind = GroupVersion.WithKind(ApplicationSetKind)

// ApplicationGroupVersionResource is the GroupVersionResource of Application.
var ApplicationGroupVersionResource = GroupVersion.WithResource(ApplicationResource)

// AppProjectGroupVersionResource is the GroupVersionResource of AppProject.
var AppProjectGroupVersionResource = GroupVersion.WithResource(AppProjectResource)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Application{}, &ApplicationList{},
		&AppProject{}, &AppProjectList{},
		&ApplicationSet{}, &ApplicationSetList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
