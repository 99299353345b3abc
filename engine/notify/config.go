package notify

import (
	"fmt"
	"maps"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/templates"
	"github.com/argoproj/notifications-engine/pkg/triggers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The names of Argo CD's notifications ConfigMap and Secret, in the
// control-plane namespace.
const (
	ConfigMapName = "argocd-notifications-cm"
	SecretName    = "argocd-notifications-secret"
)

// Config is argocd-notifications-cm, parsed by notifications-engine, with
// its services built (their $references taken from the Secret), its
// triggers compiled and its templates parsed.
type Config struct {
	api       *api.Config
	services  map[string]services.NotificationService
	triggers  triggers.Service
	templates templates.Service
	// context is the context key of the ConfigMap (argocdUrl and
	// others), .context in templates and context in conditions.
	context map[string]string
	// secrets are the Secret's values, .secrets in templates, as Argo CD
	// gives them when self-service notifications are off.
	secrets map[string][]byte
}

// Parse reads argocd-notifications-cm's data, with secret the data of
// argocd-notifications-secret, as Argo CD's notifications controller
// does (api.ParseConfig), and builds every service. Any error refuses the
// whole configuration.
func Parse(data map[string]string, secret map[string][]byte) (*Config, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName}, Data: data}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName}, Data: secret}
	cfg, err := api.ParseConfig(cm, sec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigMapName, err)
	}
	c := &Config{api: cfg, services: map[string]services.NotificationService{}, context: map[string]string{}, secrets: secret}
	for name, build := range cfg.Services {
		s, err := build()
		if err != nil {
			return nil, fmt.Errorf("%s service %s: %w", ConfigMapName, name, err)
		}
		c.services[name] = s
	}
	for name, conds := range cfg.Triggers {
		// Compiled one by one to name the one that does not compile.
		if _, err := triggers.NewService(map[string][]triggers.Condition{name: conds}); err != nil {
			return nil, fmt.Errorf("%s trigger.%s: %w", ConfigMapName, name, err)
		}
	}
	if c.triggers, err = triggers.NewService(cfg.Triggers); err != nil {
		return nil, fmt.Errorf("%s triggers: %w", ConfigMapName, err)
	}
	if c.templates, err = templates.NewService(cfg.Templates); err != nil {
		return nil, fmt.Errorf("%s templates: %w", ConfigMapName, err)
	}
	if v, ok := data["context"]; ok {
		if err := yaml.Unmarshal([]byte(v), &c.context); err != nil {
			return nil, fmt.Errorf("%s context: %w", ConfigMapName, err)
		}
	}
	return c, nil
}

// Service is the configured service of that name, nil when there is none.
func (c *Config) Service(name string) services.NotificationService { return c.services[name] }

// contextFor is the context a template for a destination of service
// sees: the ConfigMap's, with Argo CD's legacy notificationType (the
// service) unless the ConfigMap sets it.
func (c *Config) contextFor(service string) map[string]string {
	out := map[string]string{"notificationType": service}
	maps.Copy(out, c.context)
	return out
}
