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
// --enable-managedby-label; --enable-helm and the --helm-* flags turn on
// the inflation of helmCharts, which tollgate does itself with the Helm
// SDK (helmSettings; krusty's own generator, which runs a helm binary,
// stays off). A flag that would run programs or containers from a
// tenant's repository, or that tollgate does not know, is an
// *UnsupportedError naming it.
func kustomizerOptions(buildOptions string) (*krusty.Options, *helmSettings, error) {
	var helm helmSettings
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
				return nil, nil, err
			}
			switch v {
			case types.LoadRestrictionsRootOnly.String():
				o.LoadRestrictions = types.LoadRestrictionsRootOnly
			case types.LoadRestrictionsNone.String():
				o.LoadRestrictions = types.LoadRestrictionsNone
			default:
				return nil, nil, &UnsupportedError{Field: BuildOptionsField + " " + flag + " " + v,
					Why: "the load restrictor is LoadRestrictionsRootOnly or LoadRestrictionsNone"}
			}
		case "--reorder":
			v, err := next()
			if err != nil {
				return nil, nil, err
			}
			switch v {
			case "legacy":
				o.Reorder = krusty.ReorderOptionLegacy
			case "none":
				o.Reorder = krusty.ReorderOptionNone
			default:
				return nil, nil, &UnsupportedError{Field: BuildOptionsField + " --reorder " + v, Why: "the order is legacy or none"}
			}
		case "--enable-managedby-label", "--enable-helm":
			// A boolean flag: set, or given true or false.
			on := true
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return nil, nil, &UnsupportedError{Field: BuildOptionsField + " " + args[i], Why: "its value is true or false"}
				}
				on = b
			}
			if flag == "--enable-helm" {
				helm.enabled = on
			} else {
				o.AddManagedbyLabel = on
			}
		case "--helm-kube-version":
			v, err := next()
			if err != nil {
				return nil, nil, err
			}
			helm.kubeVersion = v
		case "--helm-api-versions":
			v, err := next()
			if err != nil {
				return nil, nil, err
			}
			helm.apiVersions = append(helm.apiVersions, v)
		case "--helm-command":
			// The binary is never run: charts are inflated with the
			// Helm SDK.
			if _, err := next(); err != nil {
				return nil, nil, err
			}
		case "--stack-trace", "--helm-debug":
			// Only change error output.
		default:
			return nil, nil, &UnsupportedError{Field: BuildOptionsField + " " + flag, Why: buildOptionWhy(flag)}
		}
	}
	if !helm.enabled {
		return o, nil, nil
	}
	return o, &helm, nil
}

// HelmEnabled reports whether kustomize build options (argocd-cm's
// kustomize.buildOptions) turn on the inflation of helmCharts, as Argo
// CD's isHelmEnabled does: the repo-server pulls their charts only then.
func HelmEnabled(buildOptions string) bool {
	_, h, err := kustomizerOptions(buildOptions)
	return err == nil && h != nil
}

// buildOptionWhy says why tollgate does not honour a flag of kustomize
// build.
func buildOptionWhy(flag string) string {
	switch flag {
	case "--enable-alpha-plugins", "--enable-exec", "--enable-star", "--network", "--network-name", "--mount", "--env", "-e", "--as-current-user":
		return "it would run programs or containers (KRM functions, exec plugins) from the tenant's repository in the repo-server"
	case "--output", "-o":
		return "the repo-server reads kustomize's output itself"
	}
	return "tollgate does not know this kustomize build flag"
}
