package reposerver

import (
	"context"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// AppDetailsPath is where a repo-server answers a Request with the
// AppDetails of its first source: Argo CD's GetAppDetails, which
// notification templates read as repo.GetAppDetails.
const AppDetailsPath = "/v1/appdetails"

// AppDetails is what a repo-server tells of an Application's first source
// without deploying it, as Argo CD's repo-server does.
type AppDetails struct {
	// Type is the source's type: Helm, Kustomize, Directory or Plugin.
	Type v1alpha1.ApplicationSourceType `json:"type"`
	// Helm is set for a Helm source.
	Helm *HelmDetails `json:"helm,omitempty"`
	// Kustomize is set for a Kustomize source.
	Kustomize *KustomizeDetails `json:"kustomize,omitempty"`
}

// HelmDetails are a Helm source's value files and values
// (render.HelmDetails).
type HelmDetails struct {
	// ValueFiles are the value files under the chart directory, relative
	// to it.
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Values is the chart's values.yaml.
	Values string `json:"values,omitempty"`
	// Parameters are values.yaml and the source's value files, flattened
	// ("image.tag"), by name.
	Parameters map[string]string `json:"parameters,omitempty"`
}

// KustomizeDetails are what a Kustomize source renders to, as Argo CD
// tells them.
type KustomizeDetails struct {
	// Images are the images of the containers and init containers of
	// every rendered object, sorted, repeated as often as they occur.
	Images []string `json:"images,omitempty"`
}

// AppDetailsReader reads AppDetails: Service in process, Client through
// repo-servers.
type AppDetailsReader interface {
	AppDetails(ctx context.Context, req *Request) (*AppDetails, error)
}

// AppDetails sends req to a repo-server as Generate does.
func (c *Client) AppDetails(ctx context.Context, req *Request) (*AppDetails, error) {
	var resp AppDetails
	if err := c.post(ctx, AppDetailsPath, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
