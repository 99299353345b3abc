package render

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// BuildOptionsField names argocd-cm's kustomize.buildOptions in errors.
const BuildOptionsField = "argocd-cm kustomize.buildOptions"

// kustomizerOptions returns the kustomize build options of buildOptions,
// the flags of `kustomize build` that argocd-cm's kustomize.buildOptions
// gives every Kustomize render (Options.KustomizeBuildOptions), on top of
// the kustomize CLI's defaults, which Argo CD uses: legacy order unless
// the kustomization sets sortOptions, files of the kustomization's
// directory only, no plugins. Honoured: --load-restrictor (with
// LoadRestrictionsNone a kustomization may read any file of its
// repository, never one outside it), --reorder and
// --enable-managedby-label. A flag that would run programs, containers or
// helm from a tenant's repository, or that tollgate does not know, is an
// *UnsupportedError naming it.
func kustomizerOptions(buildOptions string) (*krusty.Options, error) {
	o := &krusty.Options{
		Reorder:           krusty.ReorderOptionUnspecified,
		AddManagedbyLabel: false,
		LoadRestrictions:  types.LoadRestrictionsRootOnly,
		PluginConfig:      types.DisabledPluginConfig(),
	}
	args := strings.Fields(buildOptions)
	for i := 0; i < len(args); i++ {
		flag, value, hasValue := strings.Cut(args[i], "=")
		// value returns the flag's value: after "=", else the next word.
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return "", &UnsupportedError{Field: BuildOptionsField + " " + flag, Why: "it needs a value"}
			}
			i++
			return args[i], nil
		}
		switch flag {
		case "--load-restrictor", "--load_restrictor":
			v, err := next()
			if err != nil {
				return nil, err
			}
			switch v {
			case types.LoadRestrictionsRootOnly.String():
				o.LoadRestrictions = types.LoadRestrictionsRootOnly
			case types.LoadRestrictionsNone.String():
				o.LoadRestrictions = types.LoadRestrictionsNone
			default:
				return nil, &UnsupportedError{Field: BuildOptionsField + " " + flag + " " + v,
					Why: "the load restrictor is LoadRestrictionsRootOnly or LoadRestrictionsNone"}
			}
		case "--reorder":
			v, err := next()
			if err != nil {
				return nil, err
			}
			switch v {
			case "legacy":
				o.Reorder = krusty.ReorderOptionLegacy
			case "none":
				o.Reorder = krusty.ReorderOptionNone
			default:
				return nil, &UnsupportedError{Field: BuildOptionsField + " --reorder " + v, Why: "the order is legacy or none"}
			}
		case "--enable-managedby-label":
			on := true
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return nil, &UnsupportedError{Field: BuildOptionsField + " " + args[i], Why: "its value is true or false"}
				}
				on = b
			}
			o.AddManagedbyLabel = on
		case "--stack-trace":
			// Only changes error output.
		default:
			return nil, &UnsupportedError{Field: BuildOptionsField + " " + flag, Why: buildOptionWhy(flag)}
		}
	}
	return o, nil
}

// buildOptionWhy says why tollgate does not honour a flag of kustomize
// build.
func buildOptionWhy(flag string) string {
	switch flag {
	case "--enable-helm", "--helm-command", "--helm-api-versions", "--helm-kube-version", "--helm-debug":
		return "kustomize's helmCharts are not inflated (tollgate runs no helm binary for a kustomization); render the chart as a Helm source of the Application"
	case "--enable-alpha-plugins", "--enable-exec", "--enable-star", "--network", "--network-name", "--mount", "--env", "-e", "--as-current-user":
		return "it would run programs or containers (KRM functions, exec plugins) from the tenant's repository in the repo-server"
	case "--output", "-o":
		return "the repo-server reads kustomize's output itself"
	}
	return "tollgate does not know this kustomize build flag"
}
