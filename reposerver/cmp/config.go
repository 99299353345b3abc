package cmp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// DefaultSocketDir is where Argo CD's repo-server finds plugin sockets, and
// DefaultConfigPath where argocd-cmp-server reads plugin.yaml.
const (
	DefaultSocketDir  = "/home/argocd/cmp-server/plugins"
	DefaultConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"
)

// ConfigKind is the kind of plugin.yaml.
const ConfigKind = "ConfigManagementPlugin"

// maxConfigBytes bounds plugin.yaml.
const maxConfigBytes = 1 << 20

// Config is plugin.yaml (kind ConfigManagementPlugin, apiVersion
// argoproj.io/v1alpha1), as argocd-cmp-server reads it. Like Argo CD, it is
// YAML or JSON, field names match case-insensitively and unknown fields
// are ignored (older plugin.yaml files carry fields Argo CD dropped).
type Config struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind"`
	Metadata   ConfigMetadata `json:"metadata"`
	Spec       ConfigSpec     `json:"spec"`
}

// ConfigMetadata is the part of a plugin's metadata that matters: its name.
type ConfigMetadata struct {
	Name string `json:"name"`
}

// ConfigSpec is a plugin's spec.
type ConfigSpec struct {
	// Version, when set, is part of the plugin's name on the socket:
	// <name>-<version>.
	Version string `json:"version,omitempty"`
	// Init runs before Generate, in the same directory.
	Init Command `json:"init,omitempty"`
	// Generate prints the manifests (a YAML or JSON stream) on stdout.
	Generate Command `json:"generate"`
	// Discover decides whether the plugin supports a source when an
	// Application names no plugin.
	Discover Discover `json:"discover,omitempty"`
	// Parameters are the parameters the plugin announces.
	Parameters Parameters `json:"parameters,omitempty"`
	// PreserveFileMode keeps the files' modes from the archive (else files
	// are 0644 and directories 0755).
	PreserveFileMode bool `json:"preserveFileMode,omitempty"`
	// ProvideGitCreds asks the repo-server for the repository's Git
	// credentials. tollgate's repo-server never sends them (see Generate).
	ProvideGitCreds bool `json:"provideGitCreds,omitempty"`
}

// Command is a command line: Command then Args.
type Command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// argv is the command line.
func (c Command) argv() []string {
	return append(c.Command[:len(c.Command):len(c.Command)], c.Args...)
}

// Discover is how the plugin says it supports a source: the first set of
// FileName, Find.Glob and Find.Command decides.
type Discover struct {
	Find Find `json:"find,omitempty"`
	// FileName is a filepath.Glob pattern, relative to the source's
	// directory.
	FileName string `json:"fileName,omitempty"`
}

// Find is a glob (with ** for any depth) or a command whose non-empty
// output says the source is supported.
type Find struct {
	Command
	Glob string `json:"glob,omitempty"`
}

// IsDefined reports whether discovery is configured.
func (d Discover) IsDefined() bool {
	return d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command.Command) > 0
}

// Parameters are the parameters a plugin announces: Static ones, and the
// ones the Dynamic command prints (a JSON list of announcements).
type Parameters struct {
	Static  []ParameterAnnouncement `json:"static,omitempty"`
	Dynamic Command                 `json:"dynamic,omitempty"`
}

// Name is the plugin's name as Applications select it and as its socket
// is named: metadata.name, then -spec.version when set.
func (c *Config) Name() string {
	if c.Spec.Version != "" {
		return c.Metadata.Name + "-" + c.Spec.Version
	}
	return c.Metadata.Name
}

// SocketName is the plugin's socket file name: Name then .sock.
func (c *Config) SocketName() string { return c.Name() + ".sock" }

// LoadConfig reads and validates the plugin.yaml at path.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load plugin config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load plugin config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("load plugin config %s: larger than %d bytes", path, maxConfigBytes)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("load plugin config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes and validates a plugin.yaml.
func ParseConfig(data []byte) (*Config, error) {
	var cfg Config
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// Validate checks what argocd-cmp-server checks (metadata.name, kind,
// spec.generate.command), with Argo CD's messages, and that the plugin's
// name makes a socket file name.
func (c *Config) Validate() error {
	const invalid = "invalid plugin configuration file. "
	if c.Metadata.Name == "" {
		return errors.New(invalid + "metadata.name should be non-empty")
	}
	if c.Kind != ConfigKind {
		return fmt.Errorf(invalid+"kind should be %s, found %s", ConfigKind, c.Kind)
	}
	if len(c.Spec.Generate.Command) == 0 {
		return errors.New(invalid + "spec.generate command should be non-empty")
	}
	for _, f := range []struct{ field, value string }{{"metadata.name", c.Metadata.Name}, {"spec.version", c.Spec.Version}} {
		if strings.ContainsAny(f.value, "/\x00") || f.value == "." || f.value == ".." {
			return fmt.Errorf(invalid+"%s %q cannot be part of a socket file name", f.field, f.value)
		}
	}
	return nil
}
