package policies

// ConfigOverrides are what a command puts over its configuration file,
// from its flags or its environment: tollgate test's --argocd-namespace,
// the engine's --namespace and $POD_NAMESPACE, the webhook's --namespace.
// Empty fields change nothing.
type ConfigOverrides struct {
	// ArgoCDNamespace replaces the file's argocdNamespace.
	ArgoCDNamespace string
	// FallbackArgoCDNamespace is the argocdNamespace when neither the file
	// nor ArgoCDNamespace names one.
	FallbackArgoCDNamespace string
	// FallbackTollgateNamespace is the tollgateNamespace when the file
	// names none.
	FallbackTollgateNamespace string
	// TrackingMethod replaces the file's trackingMethod (a command's
	// --tracking-method); the caller checks it is Valid.
	TrackingMethod TrackingMethod
}

// Apply returns c with o over it: what the command says first, then what
// the file says, then o's fallbacks.
func (o ConfigOverrides) Apply(c Config) Config {
	if o.ArgoCDNamespace != "" {
		c.ArgoCDNamespace = o.ArgoCDNamespace
	}
	if c.ArgoCDNamespace == "" {
		c.ArgoCDNamespace = o.FallbackArgoCDNamespace
	}
	if c.TollgateNamespace == "" {
		c.TollgateNamespace = o.FallbackTollgateNamespace
	}
	if o.TrackingMethod != "" {
		c.TrackingMethod = o.TrackingMethod
	}
	return c
}

// LoadConfigWith reads the configuration file at path (LoadConfig), or
// starts from the zero Config when path is "", and applies o over it. It
// is how every command reads its policy configuration; the webhook, whose
// file embeds Config, applies o to that embedded Config.
func LoadConfigWith(path string, o ConfigOverrides) (Config, error) {
	var cfg Config
	if path != "" {
		var err error
		if cfg, err = LoadConfig(path); err != nil {
			return Config{}, err
		}
	}
	return o.Apply(cfg), nil
}
