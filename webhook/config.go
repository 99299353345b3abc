package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/policies"
)

// Mode says whether the webhook enforces denials.
type Mode string

// Modes.
const (
	// ModeEnforce denies requests with deny violations.
	ModeEnforce Mode = "enforce"
	// ModeAudit never denies: deny violations are logged, counted and
	// returned as warnings.
	ModeAudit Mode = "audit"
)

// TrackingMethod says how the owning Application of an object is found: the
// policy configuration's trackingMethod (Config.TrackingMethod), which the
// engine reads too. The webhook reads it as a v1alpha1.TrackingMethod.
type TrackingMethod = policies.TrackingMethod

// Tracking methods, as the webhook reads them.
const (
	// TrackingAnnotation reads only the TrackingIDAnnotation.
	TrackingAnnotation = policies.TrackingAnnotation
	// TrackingLabel reads only the InstanceLabel.
	TrackingLabel = policies.TrackingLabel
	// TrackingAnnotationAndLabel reads the annotation and, when it is absent
	// or does not describe the object, the label.
	TrackingAnnotationAndLabel = policies.TrackingAnnotationAndLabel
)

// Argo CD's resource tracking metadata.
const (
	// TrackingIDAnnotation is Argo CD's (and tollgate's engine's) tracking
	// annotation: "<app>:<group>/<kind>:<namespace>/<name>", where <app> is
	// the Application's name, or "<namespace>_<name>" for an Application
	// outside the Argo CD namespace.
	TrackingIDAnnotation = v1alpha1.AnnotationKeyTrackingID
	// InstanceLabel is Argo CD's legacy tracking label; its value is <app> as
	// above. Many Helm charts set it to the release name too, which only
	// matters when an Application of that name exists.
	InstanceLabel = v1alpha1.LabelKeyAppInstance
)

// maxConfigBytes bounds the size of a configuration file.
const maxConfigBytes = 1 << 20

// Config is the webhook's configuration file. It embeds the policy
// configuration shared with the CLI and the engine (argocdNamespace, rules,
// exemptAnnotation, trackingMethod):
//
//	argocdNamespace: argocd
//	mode: enforce
//	rules:
//	  default-project: deny
//	exemptNamespaces: [kube-system, kube-public, kube-node-lease]
//	exemptUsers: [system:kube-controller-manager]
//	exemptGroups: [system:nodes]
//	trackingMethod: annotation+label
//
// A list given in the file replaces the default list; an empty list ([])
// exempts nothing.
type Config struct {
	policies.Config `json:",inline"`

	// Mode is enforce (the default) or audit.
	Mode Mode `json:"mode,omitempty"`
	// ExemptNamespaces are allowed without judging. The webhook's own
	// namespace is always exempt as well (Options.Namespace).
	ExemptNamespaces []string `json:"exemptNamespaces"`
	// ExemptUsers are user names (service accounts as
	// system:serviceaccount:<namespace>:<name>) whose requests are allowed
	// without judging.
	ExemptUsers []string `json:"exemptUsers"`
	// ExemptGroups are groups whose members' requests are allowed without
	// judging.
	ExemptGroups []string `json:"exemptGroups"`
	// SyncUsers are the users that apply Applications' manifests (the sync
	// engines). An object tracked by an Application and written by anyone
	// else is judged against that Application's project without the
	// project's exemptions (policies.Context.ClaimedApplication): tracking
	// metadata is written by whoever writes the object. Nil means
	// DefaultSyncUsers; [] trusts nobody's tracking.
	SyncUsers []string `json:"syncUsers"`
	// ControllerUsers are the users of tollgate's controller, the only
	// ones that may write its reserved annotations on Applications (the
	// operation fence, rule reserved-annotation). Nil means
	// DefaultControllerUsers; [] lets nobody write them.
	ControllerUsers []string `json:"controllerUsers"`
}

// DefaultControllerUsers returns tollgate's controller's service account
// in tollgateNS.
func DefaultControllerUsers(tollgateNS string) []string {
	return []string{"system:serviceaccount:" + tollgateNS + ":tollgate-controller"}
}

// DefaultSyncUsers returns the sync engines' users by default: tollgate's
// controller in tollgateNS and Argo CD's application controller in
// argocdNS.
func DefaultSyncUsers(tollgateNS, argocdNS string) []string {
	return append(DefaultControllerUsers(tollgateNS),
		"system:serviceaccount:"+argocdNS+":argocd-application-controller")
}

// DefaultExemptNamespaces returns the namespaces exempt by default: the
// cluster's own.
func DefaultExemptNamespaces() []string {
	return []string{"kube-system", "kube-public", "kube-node-lease"}
}

// DefaultExemptUsers returns the users exempt by default: the kube-system
// controllers, which create or update objects the cluster derives from
// objects already admitted, or objects that never come from Git:
//
//   - system:kube-controller-manager: controllers running with the
//     controller manager's own credentials, among them the service account
//     token controller, which writes token Secrets;
//   - the kube-system service accounts of the workload controllers
//     (--use-service-account-credentials): replicaset, deployment,
//     statefulset, daemon-set, replication, job and cronjob controllers
//     create Pods, ReplicaSets and Jobs from admitted templates, and the
//     garbage collector and namespace controller update owner references and
//     finalizers.
//
// Nothing else is exempt by default: a user name is only as trustworthy as
// the namespace of its service account, and a tenant who may create the
// namespace external-secrets and a ServiceAccount external-secrets in it
// would be exempt from every rule under a default that named External
// Secrets' controller. Clusters that run such controllers add them in the
// configuration file (see docs/webhook.md).
func DefaultExemptUsers() []string {
	users := []string{"system:kube-controller-manager"}
	for _, sa := range []string{
		"cronjob-controller",
		"daemon-set-controller",
		"deployment-controller",
		"generic-garbage-collector",
		"job-controller",
		"namespace-controller",
		"replicaset-controller",
		"replication-controller",
		"statefulset-controller",
	} {
		users = append(users, "system:serviceaccount:kube-system:"+sa)
	}
	return users
}

// DefaultExemptGroups returns the groups exempt by default: system:nodes,
// whose kubelets create mirror Pods of static Pods (node-local
// configuration, not GitOps).
func DefaultExemptGroups() []string {
	return []string{"system:nodes"}
}

// DefaultConfig returns the configuration used without a file: enforce mode,
// the default exemptions, annotation+label tracking and the policy defaults.
func DefaultConfig() Config {
	return Config{
		Mode:             ModeEnforce,
		ExemptNamespaces: DefaultExemptNamespaces(),
		ExemptUsers:      DefaultExemptUsers(),
		ExemptGroups:     DefaultExemptGroups(),
		// The engine's default is annotation; reading the label too
		// finds the owners of objects a label-tracking Argo CD left.
		Config: policies.Config{TrackingMethod: TrackingAnnotationAndLabel},
	}
}

// namespacePattern is a Kubernetes namespace name (a DNS label).
var namespacePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Validate checks the configuration: the embedded policy configuration, the
// mode, the tracking method and the exemption lists. Errors name the field.
func (c Config) Validate() error {
	var errs []error
	if err := c.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch c.Mode {
	case "", ModeEnforce, ModeAudit:
	default:
		errs = append(errs, fmt.Errorf("mode: invalid mode %q (want enforce or audit)", c.Mode))
	}
	for i, ns := range c.ExemptNamespaces {
		if !namespacePattern.MatchString(ns) {
			errs = append(errs, fmt.Errorf("exemptNamespaces[%d]: invalid namespace name %q", i, ns))
		}
	}
	for _, l := range []struct {
		field string
		names []string
	}{{"exemptUsers", c.ExemptUsers}, {"exemptGroups", c.ExemptGroups}, {"syncUsers", c.SyncUsers}, {"controllerUsers", c.ControllerUsers}} {
		for i, s := range l.names {
			if strings.TrimSpace(s) == "" || strings.TrimSpace(s) != s {
				errs = append(errs, fmt.Errorf("%s[%d]: invalid name %q (empty or surrounded by spaces)", l.field, i, s))
			}
		}
	}
	return errors.Join(errs...)
}

// LoadConfig reads a YAML configuration file over DefaultConfig: fields the
// file sets replace the defaults. Unknown fields, duplicate keys and invalid
// values are errors naming the file and the field. Unknown rule ids are
// reported by policies.New, which also knows the user policies.
func LoadConfig(path string) (Config, error) {
	data, err := bounded.ReadFile(path, maxConfigBytes)
	if err != nil {
		return Config{}, fmt.Errorf("load webhook config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("load webhook config %s: %w", path, err)
	}
	return cfg, nil
}

// LoadConfigWith reads the configuration file at path (LoadConfig), or
// starts from DefaultConfig when path is "", and applies o to its policy
// configuration, as policies.LoadConfigWith does for the other commands.
func LoadConfigWith(path string, o policies.ConfigOverrides) (Config, error) {
	cfg := DefaultConfig()
	if path != "" {
		var err error
		if cfg, err = LoadConfig(path); err != nil {
			return Config{}, err
		}
	}
	cfg.Config = o.Apply(cfg.Config)
	return cfg, nil
}

// ParseConfig decodes a YAML configuration document over DefaultConfig and
// validates it. An empty document is DefaultConfig().
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if err := policies.DecodeConfigYAML(data, &cfg); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// mode returns the configured mode, enforce when unset.
func (c Config) mode() Mode {
	if c.Mode == "" {
		return ModeEnforce
	}
	return c.Mode
}

// trackingMethod returns the configured tracking method, annotation+label
// when unset.
func (c Config) trackingMethod() v1alpha1.TrackingMethod {
	if c.TrackingMethod == "" {
		return v1alpha1.TrackingMethodAnnotationAndLabel
	}
	return v1alpha1.TrackingMethod(c.TrackingMethod)
}
