package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tollgate-dev/tollgate/policies"
)

// loadEnginePolicies reads the engine's policy configuration, the same for
// tollgate controller and the commands that judge what a diff reads
// (tollgate ui, tollgate app diff): configFile (none: the defaults) with its
// argocdNamespace defaulting to namespace and its tollgateNamespace to
// $POD_NAMESPACE, trackingMethod overridden by tracking when set; and
// compiles the evaluator once. Errors are usage errors.
func loadEnginePolicies(ctx context.Context, configFile, namespace, tracking string) (policies.Config, *policies.Evaluator, error) {
	if tm := policies.TrackingMethod(tracking); tm != "" && !tm.Valid() {
		return policies.Config{}, nil, usageError(fmt.Errorf("invalid --tracking-method %q: want annotation, label or annotation+label", tracking))
	}
	cfg, err := policies.LoadConfigWith(configFile, policies.ConfigOverrides{
		FallbackArgoCDNamespace:   namespace,
		FallbackTollgateNamespace: os.Getenv("POD_NAMESPACE"),
		TrackingMethod:            policies.TrackingMethod(tracking),
	})
	if err != nil {
		return cfg, nil, usageError(err)
	}
	popts := policies.DefaultOptions()
	popts.Config = cfg
	evaluator, err := policies.New(ctx, popts)
	if err != nil {
		return cfg, nil, usageError(err)
	}
	return cfg, evaluator, nil
}
