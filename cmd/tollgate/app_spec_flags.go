package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
)

// Argo CD's defaults of the sync retry flags (argoappv1.DefaultSyncRetry*).
const (
	defaultSyncRetryDuration    = 5 * time.Second
	defaultSyncRetryMaxDuration = 3 * time.Minute
	defaultSyncRetryFactor      = 2
	// defaultRevisionHistoryLimit is argoappv1.RevisionHistoryLimit.
	defaultRevisionHistoryLimit = 10
)

// appSpecOptions are the flags argocd app create and app set share
// (cmd/util's AppOptions): each one given sets its field of the spec, as
// SetAppSpecOptions does; a flag not given leaves its field alone.
type appSpecOptions struct {
	repoURL, appPath, chart, revision string
	revisionHistoryLimit              int
	destName, destServer, destNS      string
	parameters                        []string
	valuesFiles                       []string
	ignoreMissingValueFiles           bool
	valuesLiteralFile                 string
	releaseName, helmVersion          string
	helmPassCredentials               bool
	helmSets, helmSetStrings          []string
	helmSetFiles                      []string
	helmSkipCrds, helmSkipTests       bool
	helmSkipSchemaValidation          bool
	helmNamespace, helmKubeVersion    string
	helmAPIVersions                   []string
	project                           string
	syncPolicy                        string
	syncOptions                       []string
	autoPrune, selfHeal, allowEmpty   bool
	namePrefix, nameSuffix            string
	kustomizeVersion                  string
	kustomizeNamespace                string
	kustomizeImages                   []string
	kustomizeReplicas                 []string
	kustomizeCommonLabels             []string
	kustomizeCommonAnnotations        []string
	kustomizeForceCommonLabels        bool
	kustomizeForceCommonAnnotations   bool
	kustomizeLabelWithoutSelector     bool
	kustomizeLabelIncludeTemplates    bool
	ignoreMissingComponents           bool
	directoryRecurse                  bool
	directoryInclude                  string
	directoryExclude                  string
	directoryDisableExtensionFilter   bool
	jsonnetTLAStr, jsonnetTLACode     []string
	jsonnetExtVarStr                  []string
	jsonnetExtVarCode                 []string
	jsonnetLibs                       []string
	configManagementPlugin            string
	pluginEnvs                        []string
	retryLimit                        int64
	retryBackoffDuration              time.Duration
	retryBackoffMaxDuration           time.Duration
	retryBackoffFactor                int64
	retryRefresh                      bool
	ref, sourceName                   string
	validate                          bool
	// readFile reads --values-literal-file; nil reads the file system.
	readFile func(string) ([]byte, error)
}

// addAppSpecFlags defines argocd's app flags on f, with its names,
// shorthands and defaults.
func addAppSpecFlags(f *pflag.FlagSet, o *appSpecOptions) {
	f.StringVar(&o.repoURL, "repo", "", "Repository URL, ignored if a file is set")
	f.StringVar(&o.appPath, "path", "", "Path in repository to the app directory, ignored if a file is set")
	f.StringVar(&o.chart, "helm-chart", "", "Helm Chart name")
	f.StringVar(&o.revision, "revision", "", "The tracking source branch, tag, commit or Helm chart version the application will sync to")
	f.IntVar(&o.revisionHistoryLimit, "revision-history-limit", defaultRevisionHistoryLimit, "How many items to keep in revision history")
	f.StringVar(&o.destServer, "dest-server", "", "K8s cluster URL (e.g. https://kubernetes.default.svc)")
	f.StringVar(&o.destName, "dest-name", "", "K8s cluster Name (e.g. minikube)")
	f.StringVar(&o.destNS, "dest-namespace", "", "K8s target namespace")
	f.StringArrayVarP(&o.parameters, "parameter", "p", nil, "set a parameter override (e.g. -p guestbook=image=example/guestbook:latest)")
	f.StringArrayVar(&o.valuesFiles, "values", nil, "Helm values file(s) to use")
	f.BoolVar(&o.ignoreMissingValueFiles, "ignore-missing-value-files", false, "Ignore locally missing valueFiles when setting helm template --values")
	f.StringVar(&o.valuesLiteralFile, "values-literal-file", "", "Filename to import as a literal Helm values block")
	f.StringVar(&o.releaseName, "release-name", "", "Helm release-name")
	f.StringVar(&o.helmVersion, "helm-version", "", "Helm version")
	f.BoolVar(&o.helmPassCredentials, "helm-pass-credentials", false, "Pass credentials to all domain")
	f.StringArrayVar(&o.helmSets, "helm-set", nil, "Helm set values on the command line (can be repeated to set several values: --helm-set key1=val1 --helm-set key2=val2)")
	f.StringArrayVar(&o.helmSetStrings, "helm-set-string", nil, "Helm set STRING values on the command line (can be repeated to set several values: --helm-set-string key1=val1 --helm-set-string key2=val2)")
	f.StringArrayVar(&o.helmSetFiles, "helm-set-file", nil, "Helm set values from respective files specified via the command line (can be repeated to set several values: --helm-set-file key1=path1 --helm-set-file key2=path2)")
	f.BoolVar(&o.helmSkipCrds, "helm-skip-crds", false, "Skip helm crd installation step")
	f.BoolVar(&o.helmSkipSchemaValidation, "helm-skip-schema-validation", false, "Skip helm schema validation step")
	f.BoolVar(&o.helmSkipTests, "helm-skip-tests", false, "Skip helm test manifests installation step")
	f.StringVar(&o.helmNamespace, "helm-namespace", "", "Helm namespace to use when running helm template. If not set, use app.spec.destination.namespace")
	f.StringVar(&o.helmKubeVersion, "helm-kube-version", "", "Helm kube-version to use when running helm template. If not set, use the kube version from the destination cluster")
	f.StringArrayVar(&o.helmAPIVersions, "helm-api-versions", nil, "Helm api-versions (in format [group/]version/kind) to use when running helm template")
	f.StringVar(&o.project, "project", "", "Application project name")
	f.StringVar(&o.syncPolicy, "sync-policy", "", "Set the sync policy (one of: none, automated)")
	f.StringArrayVar(&o.syncOptions, "sync-option", nil, "Add or remove a sync option, e.g add `Prune=false`. Remove using `!` prefix, e.g. `!Prune=false`")
	f.BoolVar(&o.autoPrune, "auto-prune", false, "Set automatic pruning for automated sync policy")
	f.BoolVar(&o.selfHeal, "self-heal", false, "Set self healing for automated sync policy")
	f.BoolVar(&o.allowEmpty, "allow-empty", false, "Set allow zero live resources for automated sync policy")
	f.StringVar(&o.namePrefix, "nameprefix", "", "Kustomize nameprefix")
	f.StringVar(&o.nameSuffix, "namesuffix", "", "Kustomize namesuffix")
	f.StringVar(&o.kustomizeVersion, "kustomize-version", "", "Kustomize version")
	f.StringVar(&o.kustomizeNamespace, "kustomize-namespace", "", "Kustomize namespace")
	f.StringArrayVar(&o.kustomizeImages, "kustomize-image", nil, "Kustomize images (e.g. --kustomize-image node:8.15.0 --kustomize-image mysql=mariadb,alpine@sha256:...)")
	f.StringArrayVar(&o.kustomizeReplicas, "kustomize-replica", nil, "Kustomize replicas (e.g. --kustomize-replica my-development=2 --kustomize-replica my-statefulset=4)")
	f.StringArrayVar(&o.kustomizeCommonLabels, "kustomize-common-label", nil, "Set common labels in Kustomize")
	f.StringArrayVar(&o.kustomizeCommonAnnotations, "kustomize-common-annotation", nil, "Set common labels in Kustomize")
	f.BoolVar(&o.kustomizeForceCommonLabels, "kustomize-force-common-label", false, "Force common labels in Kustomize")
	f.BoolVar(&o.kustomizeForceCommonAnnotations, "kustomize-force-common-annotation", false, "Force common annotations in Kustomize")
	f.BoolVar(&o.kustomizeLabelWithoutSelector, "kustomize-label-without-selector", false, "Do not apply common label to selectors. Also do not apply label to templates unless --kustomize-label-include-templates is set")
	f.BoolVar(&o.kustomizeLabelIncludeTemplates, "kustomize-label-include-templates", false, "Apply common label to resource templates")
	f.BoolVar(&o.ignoreMissingComponents, "ignore-missing-components", false, "Ignore locally missing component directories when setting Kustomize components")
	f.BoolVar(&o.directoryRecurse, "directory-recurse", false, "Recurse directory")
	f.StringVar(&o.directoryExclude, "directory-exclude", "", "Set glob expression used to exclude files from application source path")
	f.StringVar(&o.directoryInclude, "directory-include", "", "Set glob expression used to include files from application source path")
	f.BoolVar(&o.directoryDisableExtensionFilter, "directory-disable-extension-filter", false, "Disable the built-in file-extension filter so that include/exclude patterns can match files with custom extensions")
	f.StringArrayVar(&o.jsonnetTLAStr, "jsonnet-tla-str", nil, "Jsonnet top level string arguments")
	f.StringArrayVar(&o.jsonnetTLACode, "jsonnet-tla-code", nil, "Jsonnet top level code arguments")
	f.StringArrayVar(&o.jsonnetExtVarStr, "jsonnet-ext-var-str", nil, "Jsonnet string ext var")
	f.StringArrayVar(&o.jsonnetExtVarCode, "jsonnet-ext-var-code", nil, "Jsonnet ext var")
	f.StringArrayVar(&o.jsonnetLibs, "jsonnet-libs", nil, "Additional jsonnet libs (prefixed by repoRoot)")
	f.StringVar(&o.configManagementPlugin, "config-management-plugin", "", "Config management plugin name")
	f.StringArrayVar(&o.pluginEnvs, "plugin-env", nil, "Additional plugin envs")
	f.Int64Var(&o.retryLimit, "sync-retry-limit", 0, "Max number of allowed sync retries")
	f.DurationVar(&o.retryBackoffDuration, "sync-retry-backoff-duration", defaultSyncRetryDuration, "Sync retry backoff base duration. Input needs to be a duration (e.g. 2m, 1h)")
	f.DurationVar(&o.retryBackoffMaxDuration, "sync-retry-backoff-max-duration", defaultSyncRetryMaxDuration, "Max sync retry backoff duration. Input needs to be a duration (e.g. 2m, 1h)")
	f.Int64Var(&o.retryBackoffFactor, "sync-retry-backoff-factor", defaultSyncRetryFactor, "Factor multiplies the base duration after each failed sync retry")
	f.BoolVar(&o.retryRefresh, "sync-retry-refresh", false, "Indicates if the latest revision should be used on retry instead of the initial one")
	f.StringVar(&o.ref, "ref", "", "Ref is reference to another source within sources field")
	f.StringVar(&o.sourceName, "source-name", "", "Name of the source from the list of sources of the app.")
	f.BoolVar(&o.validate, "validate", true, "accepted for argocd's scripts; the admission webhook and the controller validate every write")
}

// brakeFlags are the flags app set reads with the emergency brake's
// meaning (setSyncPolicy) when no other field flag is given.
var brakeFlags = []string{"sync-policy", "self-heal", "auto-prune"}

// targetFlags say which Application, not what to change.
var targetFlags = []string{"namespace", "app-namespace", "kubeconfig", "source-position", "v", "validate"}

// specFlagsGiven are the flags of f given on the command line that change
// the spec, less the brake's.
func specFlagsGiven(f *pflag.FlagSet) []string {
	var given []string
	f.Visit(func(fl *pflag.Flag) {
		if !slices.Contains(brakeFlags, fl.Name) && !slices.Contains(targetFlags, fl.Name) {
			given = append(given, fl.Name)
		}
	})
	return given
}

// errSourcePosition and its kin are argocd's refusals of a source
// position.
var (
	errSourcePosition  = errors.New("Source position should be specified and must be greater than 0 for applications with multiple sources") //nolint:staticcheck // argocd's message
	errSourceTooFar    = errors.New("Source position should be less than the number of sources in the application")                          //nolint:staticcheck // argocd's message
	errSourceNameAndAt = errors.New("Only one of source-position and source-name can be specified.")                                         //nolint:staticcheck // argocd's message
)

// sourcePosition resolves --source-position (1-based, -1 when not given)
// and --source-name against spec as argocd app set and unset do.
func sourcePosition(spec *v1alpha1.ApplicationSpec, position int, name string) (int, error) {
	if name != "" {
		if position != -1 {
			return 0, usageError(errSourceNameAndAt)
		}
		i := slices.IndexFunc(spec.Sources, func(s v1alpha1.ApplicationSource) bool { return s.Name == name })
		if i < 0 {
			return 0, usageError(fmt.Errorf("Unknown source name '%s'", name)) //nolint:staticcheck // argocd's message
		}
		position = i + 1
	}
	if spec.HasMultipleSources() {
		if position <= 0 {
			return 0, usageError(errSourcePosition)
		}
		if position > len(spec.Sources) {
			return 0, usageError(errSourceTooFar)
		}
	}
	return position, nil
}

// sourceAt is the source of spec at position (1-based) of a multi-source
// spec, else the single source, made when missing.
func sourceAt(spec *v1alpha1.ApplicationSpec, position int) *v1alpha1.ApplicationSource {
	if spec.HasMultipleSources() {
		return &spec.Sources[max(position, 1)-1]
	}
	if spec.Source == nil {
		spec.Source = &v1alpha1.ApplicationSource{}
	}
	return spec.Source
}

// applySpec sets the fields of spec the flags of f given on the command
// line name, as argocd's SetAppSpecOptions and its -p overrides do, on the
// source at position (1-based; multi-source specs only). It returns how
// many flags it read; bad values are usage errors naming the flag.
func (o *appSpecOptions) applySpec(f *pflag.FlagSet, spec *v1alpha1.ApplicationSpec, position int) (int, error) {
	src := sourceAt(spec, position)
	visited := 0
	var errs []error
	f.Visit(func(fl *pflag.Flag) {
		visited++
		if err := o.applySource(fl.Name, src); err != nil {
			errs = append(errs, usageError(fmt.Errorf("--%s: %w", fl.Name, err)))
		}
		if err := o.applySpecField(fl.Name, spec); err != nil {
			errs = append(errs, usageError(fmt.Errorf("--%s: %w", fl.Name, err)))
		}
	})
	if len(errs) > 0 {
		return visited, errs[0]
	}
	if spec.Source != nil && !spec.HasMultipleSources() && *spec.Source == (v1alpha1.ApplicationSource{}) {
		spec.Source = nil
	}
	if f.Changed("auto-prune") || f.Changed("self-heal") || f.Changed("allow-empty") {
		if spec.SyncPolicy == nil {
			spec.SyncPolicy = &v1alpha1.SyncPolicy{}
		}
		if spec.SyncPolicy.Automated == nil {
			spec.SyncPolicy.Automated = &v1alpha1.SyncPolicyAutomated{Enabled: new(bool)}
		}
		a := spec.SyncPolicy.Automated
		if f.Changed("auto-prune") {
			a.Prune = o.autoPrune
		}
		if f.Changed("self-heal") {
			a.SelfHeal = o.selfHeal
		}
		if f.Changed("allow-empty") {
			a.AllowEmpty = o.allowEmpty
		}
	}
	if err := setParameterOverrides(src, o.parameters); err != nil {
		return visited, usageError(err)
	}
	return visited, nil
}

// applySpecField sets the field of spec outside the source that flag
// names, if any.
func (o *appSpecOptions) applySpecField(flag string, spec *v1alpha1.ApplicationSpec) error {
	ensure := func() *v1alpha1.SyncPolicy {
		if spec.SyncPolicy == nil {
			spec.SyncPolicy = &v1alpha1.SyncPolicy{}
		}
		return spec.SyncPolicy
	}
	switch flag {
	case "revision-history-limit":
		spec.RevisionHistoryLimit = new(int64(o.revisionHistoryLimit))
	case "dest-name":
		spec.Destination.Name = o.destName
	case "dest-server":
		spec.Destination.Server = o.destServer
	case "dest-namespace":
		spec.Destination.Namespace = o.destNS
	case "project":
		spec.Project = o.project
	case "sync-policy":
		switch o.syncPolicy {
		case "none", "manual":
			if spec.SyncPolicy != nil {
				spec.SyncPolicy.Automated = nil
			}
		case "automated", "automatic", "auto":
			ensure().Automated = &v1alpha1.SyncPolicyAutomated{}
		default:
			return fmt.Errorf("Invalid sync-policy: %s", o.syncPolicy) //nolint:staticcheck // argocd's message
		}
	case "sync-option":
		sp := ensure()
		for _, opt := range o.syncOptions {
			if rest, ok := strings.CutPrefix(opt, "!"); ok {
				sp.SyncOptions = slices.DeleteFunc(sp.SyncOptions, func(s string) bool { return s == rest })
			} else if !slices.Contains(sp.SyncOptions, opt) {
				sp.SyncOptions = append(sp.SyncOptions, opt)
			}
		}
	case "sync-retry-limit":
		switch {
		case o.retryLimit > 0:
			ensure().Retry = &v1alpha1.RetryStrategy{
				Limit: o.retryLimit,
				Backoff: &v1alpha1.Backoff{
					Duration:    o.retryBackoffDuration.String(),
					MaxDuration: o.retryBackoffMaxDuration.String(),
					Factor:      new(o.retryBackoffFactor),
				},
				Refresh: o.retryRefresh,
			}
		case o.retryLimit == 0:
			if spec.SyncPolicy != nil {
				spec.SyncPolicy.Retry = nil
			}
		default:
			return fmt.Errorf("Invalid sync-retry-limit [%d]", o.retryLimit) //nolint:staticcheck // argocd's message
		}
	case "sync-retry-refresh":
		sp := ensure()
		if sp.Retry == nil {
			sp.Retry = &v1alpha1.RetryStrategy{}
		}
		sp.Retry.Refresh = o.retryRefresh
	}
	if sp := spec.SyncPolicy; sp != nil && sp.Automated == nil && len(sp.SyncOptions) == 0 && sp.Retry == nil && sp.ManagedNamespaceMetadata == nil {
		spec.SyncPolicy = nil
	}
	return nil
}
