package main

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

// appUnsetOptions are the flags of `tollgate app unset`, argocd app
// unset's.
type appUnsetOptions struct {
	appTarget
	position                int
	sourceName              string
	namePrefix, nameSuffix  bool
	kustomizeVersion        bool
	kustomizeNamespace      bool
	kustomizeImages         []string
	kustomizeReplicas       []string
	ignoreMissingComponents bool
	parameters              []string
	valuesFiles             []string
	valuesLiteral           bool
	ignoreMissingValueFiles bool
	pluginEnvs              []string
	passCredentials         bool
	ref                     bool
}

func newAppUnsetCmd() *cobra.Command {
	o := appUnsetOptions{}
	cmd := &cobra.Command{
		Use:   "unset NAME",
		Short: "Unset an Application's source overrides, like argocd app unset",
		Long: `Remove overrides from a source of the Application NAME, as argocd app unset
does: Helm parameters (-p NAME), values files, the literal values block,
ignoreMissingValueFiles and passCredentials; the Kustomize name prefix and
suffix, version, namespace, images (by image name) and replicas (by
name); plugin env entries; a source's ref. For a multi-source Application,
--source-position N (from 1) or --source-name NAME says which source.

As in argocd, an override the source does not have is no change (exit 0,
nothing written); flags that name nothing of the source's kind (say
--nameprefix on a Helm source) are refused as nothing to unset.

Exit status: 0 when done; 2 on usage errors, nothing to unset, or when the
Application does not exist.`,
		Example: `  tollgate app unset my-app --kustomize-image=alpine
  tollgate app unset my-app --namesuffix
  tollgate app unset my-app --source-position 1 --namesuffix
  tollgate app unset my-app -p COMPONENT=PARAM`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return unsetApp(cmd.Context(), c, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringArrayVarP(&o.parameters, "parameter", "p", nil, "Unset a parameter override (e.g. -p guestbook=image)")
	f.StringArrayVar(&o.valuesFiles, "values", nil, "Unset one or more Helm values files")
	f.BoolVar(&o.valuesLiteral, "values-literal", false, "Unset literal Helm values block")
	f.BoolVar(&o.ignoreMissingValueFiles, "ignore-missing-value-files", false, "Unset the helm ignore-missing-value-files option (revert to false)")
	f.BoolVar(&o.nameSuffix, "namesuffix", false, "Kustomize namesuffix")
	f.BoolVar(&o.namePrefix, "nameprefix", false, "Kustomize nameprefix")
	f.BoolVar(&o.kustomizeVersion, "kustomize-version", false, "Kustomize version")
	f.BoolVar(&o.kustomizeNamespace, "kustomize-namespace", false, "Kustomize namespace")
	f.StringArrayVar(&o.kustomizeImages, "kustomize-image", nil, "Kustomize images name (e.g. --kustomize-image node --kustomize-image mysql)")
	f.StringArrayVar(&o.kustomizeReplicas, "kustomize-replica", nil, "Kustomize replicas name (e.g. --kustomize-replica my-deployment --kustomize-replica my-statefulset)")
	f.BoolVar(&o.ignoreMissingComponents, "ignore-missing-components", false, "Unset the kustomize ignore-missing-components option (revert to false)")
	f.StringArrayVar(&o.pluginEnvs, "plugin-env", nil, "Unset plugin env variables (e.g --plugin-env name)")
	f.BoolVar(&o.passCredentials, "pass-credentials", false, "Unset passCredentials")
	f.BoolVar(&o.ref, "ref", false, "Unset ref on the source")
	f.IntVar(&o.position, "source-position", -1, "Position of the source from the list of sources of the app. Counting starts at 1.")
	f.StringVar(&o.sourceName, "source-name", "", "Name of the source from the list of sources of the app.")
	return cmd
}

// unsetApp removes the overrides o names from the Application's source.
func unsetApp(ctx context.Context, c client.Client, o appUnsetOptions) error {
	app, err := readApp(ctx, c, o.key())
	if err != nil {
		return err
	}
	pos, err := sourcePosition(&app.Spec, o.position, o.sourceName)
	if err != nil {
		return err
	}
	if !app.Spec.HasMultipleSources() && app.Spec.Source == nil {
		return usageError(fmt.Errorf("nothing to unset: application %s has no source", app.Name))
	}
	spec := app.Spec.DeepCopy()
	src := sourceAt(spec, pos)
	updated, nothing := o.unset(src)
	if nothing {
		return usageError(fmt.Errorf("nothing to unset: no flag names an override of the source's kind (see tollgate app unset --help)"))
	}
	if !updated {
		return nil
	}
	if src.Helm != nil && reflect.ValueOf(*src.Helm).IsZero() {
		src.Helm = nil
	}
	if src.Kustomize != nil && reflect.ValueOf(*src.Kustomize).IsZero() {
		src.Kustomize = nil
	}
	return appops.Edit(ctx, c, app, "unset", func(a *v1alpha1.Application) { a.Spec = *spec })
}

// kustomizeZero reports whether o names no Kustomize override.
func (o appUnsetOptions) kustomizeZero() bool {
	return !o.namePrefix && !o.nameSuffix && !o.kustomizeVersion && !o.kustomizeNamespace && !o.ignoreMissingComponents &&
		len(o.kustomizeImages) == 0 && len(o.kustomizeReplicas) == 0
}

// unset removes from src the overrides o names, as argocd's unset does:
// updated when something was removed; nothing when o names no override of
// the kind of src (Kustomize, Helm or plugin), which argocd answers with
// its help.
func (o appUnsetOptions) unset(src *v1alpha1.ApplicationSource) (updated, nothing bool) {
	unsetRef := false
	if o.ref && src.Ref != "" {
		src.Ref, updated, unsetRef = "", true, true
	}
	if k := src.Kustomize; k != nil {
		if o.kustomizeZero() {
			return updated, !unsetRef
		}
		clear := func(on bool, s *string) {
			if on && *s != "" {
				*s, updated = "", true
			}
		}
		clear(o.namePrefix, &k.NamePrefix)
		clear(o.nameSuffix, &k.NameSuffix)
		clear(o.kustomizeVersion, &k.Version)
		clear(o.kustomizeNamespace, &k.Namespace)
		if o.ignoreMissingComponents && k.IgnoreMissingComponents {
			k.IgnoreMissingComponents, updated = false, true
		}
		for _, img := range o.kustomizeImages {
			n := len(k.Images)
			k.Images = slices.DeleteFunc(k.Images, func(item string) bool { return kustomizeImageMatch(img, item) })
			updated = updated || len(k.Images) != n
		}
		for _, name := range o.kustomizeReplicas {
			if i := slices.IndexFunc(k.Replicas, func(r v1alpha1.KustomizeReplica) bool { return r.Name == name }); i >= 0 {
				k.Replicas, updated = slices.Delete(k.Replicas, i, i+1), true
			}
		}
	}
	if h := src.Helm; h != nil {
		if len(o.parameters) == 0 && len(o.valuesFiles) == 0 && !o.valuesLiteral && !o.ignoreMissingValueFiles && !o.passCredentials {
			return updated, !unsetRef
		}
		for _, name := range o.parameters {
			if i := slices.IndexFunc(h.Parameters, func(p v1alpha1.HelmParameter) bool { return p.Name == name }); i >= 0 {
				h.Parameters, updated = slices.Delete(h.Parameters, i, i+1), true
			}
		}
		if o.valuesLiteral && (h.Values != "" || h.ValuesObject != nil) {
			h.Values, h.ValuesObject, updated = "", nil, true
		}
		for _, vf := range o.valuesFiles {
			if i := slices.Index(h.ValueFiles, vf); i >= 0 {
				h.ValueFiles, updated = slices.Delete(h.ValueFiles, i, i+1), true
			}
		}
		if o.ignoreMissingValueFiles && h.IgnoreMissingValueFiles {
			h.IgnoreMissingValueFiles, updated = false, true
		}
		if o.passCredentials && h.PassCredentials {
			h.PassCredentials, updated = false, true
		}
	}
	if p := src.Plugin; p != nil {
		if len(o.pluginEnvs) == 0 {
			return updated, !unsetRef
		}
		for _, name := range o.pluginEnvs {
			if i := slices.IndexFunc(p.Env, func(e v1alpha1.EnvEntry) bool { return e.Name == name }); i >= 0 {
				p.Env[i] = p.Env[len(p.Env)-1]
				p.Env, updated = p.Env[:len(p.Env)-1], true
			}
		}
	}
	return updated, false
}
