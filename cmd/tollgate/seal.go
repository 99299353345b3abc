package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"

	ssv1alpha1 "github.com/bitnami-labs/sealed-secrets/pkg/apis/sealedsecrets/v1alpha1"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/tollgate-dev/tollgate/internal/bounded"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// Bounds of the files seal reads.
const (
	maxCertBytes   = 1 << 20
	maxSecretBytes = 4 << 20
)

// sealOptions are the settings of `tollgate seal`.
type sealOptions struct {
	// CertFile is the sealed-secrets controller's PEM certificate.
	CertFile string
	// Output is "yaml" or "json".
	Output string
	// Scope is "strict", "namespace-wide" or "cluster-wide"; "" keeps the
	// scope annotated on the Secret (strict by default).
	Scope string
	// SecretFile is the plaintext Secret, "-" for standard input.
	SecretFile string
}

func newSealCmd() *cobra.Command {
	o := sealOptions{}
	cmd := &cobra.Command{
		Use:   "seal --cert FILE [-o yaml|json] [--scope strict|namespace-wide|cluster-wide] FILE",
		Short: "Seal a plaintext Secret into a SealedSecret for Git",
		Long: `Encrypt the v1 Secret in FILE ("-" for standard input) with the public key of
the sealed-secrets controller's certificate and print the SealedSecret
(bitnami.com/v1alpha1), which is safe to commit. Only the controller, which
holds the private key, can turn it back into the Secret.

The scope says where the SealedSecret may be unsealed: strict (default) pins
it to the Secret's namespace and name, namespace-wide to its namespace,
cluster-wide to nowhere in particular. Without --scope, the scope annotations
on the Secret (sealedsecrets.bitnami.com/namespace-wide, /cluster-wide) apply.`,
		Example: `  kubectl create secret generic db --from-literal=password=s3cret -n billing --dry-run=client -o yaml \
    | tollgate seal --cert sealed-secrets.pem - > db-sealedsecret.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.SecretFile = args[0]
			out, err := seal(o, cmd.InOrStdin())
			if err != nil {
				return usageError(err)
			}
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return fmt.Errorf("write sealed secret: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.CertFile, "cert", "", "PEM certificate `FILE` of the sealed-secrets controller (required)")
	f.StringVarP(&o.Output, "output", "o", "yaml", "output format: yaml or json")
	f.StringVar(&o.Scope, "scope", "", "sealing scope: strict, namespace-wide or cluster-wide (default: from the Secret's annotations, else strict)")
	_ = cmd.MarkFlagRequired("cert")
	return cmd
}

// seal reads the Secret and the certificate and returns the SealedSecret,
// encoded as o.Output.
func seal(o sealOptions, stdin io.Reader) ([]byte, error) {
	if o.Output != "yaml" && o.Output != "json" {
		return nil, fmt.Errorf("invalid --output %q: want yaml or json", o.Output)
	}
	pub, err := loadSealingKey(o.CertFile)
	if err != nil {
		return nil, err
	}
	secret, name, err := loadSecret(o.SecretFile, stdin)
	if err != nil {
		return nil, err
	}
	scope := ssv1alpha1.SecretScope(secret)
	if o.Scope != "" {
		if err := scope.Set(o.Scope); err != nil {
			return nil, fmt.Errorf("invalid --scope %q: %w", o.Scope, err)
		}
		secret.Annotations = ssv1alpha1.UpdateScopeAnnotations(secret.Annotations, scope)
	}
	if secret.Name == "" {
		return nil, fmt.Errorf("seal %s: the Secret has no metadata.name", name)
	}
	if secret.Namespace == "" && scope != ssv1alpha1.ClusterWideScope {
		return nil, fmt.Errorf("seal %s: the Secret has no metadata.namespace, which %s scope binds it to; set it or use --scope cluster-wide", name, scope.String())
	}
	sealed, err := ssv1alpha1.NewSealedSecret(scheme.Codecs, pub, secret)
	if err != nil {
		return nil, fmt.Errorf("seal %s: %w", name, err)
	}
	sealed.TypeMeta.APIVersion = ssv1alpha1.SchemeGroupVersion.String()
	sealed.TypeMeta.Kind = "SealedSecret"
	return encodeSealed(sealed, o.Output)
}

// loadSealingKey reads the RSA public key from the first certificate of the
// PEM file.
func loadSealingKey(file string) (*rsa.PublicKey, error) {
	if file == "" {
		return nil, errors.New("load certificate: --cert is required")
	}
	data, err := bounded.ReadFile(file, maxCertBytes)
	if err != nil {
		return nil, fmt.Errorf("load certificate: %w", err)
	}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("load certificate %s: no PEM CERTIFICATE block", file)
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("load certificate %s: %w", file, err)
		}
		pub, ok := cert.PublicKey.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("load certificate %s: the public key is %T, sealed secrets need RSA", file, cert.PublicKey)
		}
		return pub, nil
	}
}

// loadSecret reads the single v1 Secret in file ("-" for stdin). It returns
// the Secret and the name used for the input in messages.
func loadSecret(file string, stdin io.Reader) (*corev1.Secret, string, error) {
	name := file
	var data []byte
	var err error
	if file == "-" {
		name = "<stdin>"
		if data, err = bounded.ReadAll(stdin, maxSecretBytes); err != nil {
			return nil, name, fmt.Errorf("read secret from %s: %w", name, err)
		}
	} else if data, err = bounded.ReadFile(file, maxSecretBytes); err != nil {
		return nil, name, fmt.Errorf("read secret: %w", err)
	}
	docs, _, err := render.Decode(name, data, render.Limits{MaxFileBytes: maxSecretBytes})
	if err != nil {
		return nil, name, err
	}
	if len(docs) != 1 {
		return nil, name, fmt.Errorf("read secret %s: want exactly one Kubernetes object, found %d", name, len(docs))
	}
	d := docs[0]
	apiVersion, _ := d.Object["apiVersion"].(string)
	kind, _ := d.Object["kind"].(string)
	if apiVersion != "v1" || kind != "Secret" {
		return nil, name, fmt.Errorf("read secret %s: document %d (line %d) is %s %s, want a v1 Secret", name, d.Index+1, d.Line, apiVersion, kind)
	}
	raw, err := json.Marshal(d.Object)
	if err != nil {
		return nil, name, fmt.Errorf("read secret %s: %w", name, err)
	}
	var s corev1.Secret
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, name, fmt.Errorf("read secret %s: %w", name, err)
	}
	return &s, name, nil
}

// encodeSealed encodes the SealedSecret as YAML or indented JSON, without
// the empty creationTimestamp fields the API types carry.
func encodeSealed(s *ssv1alpha1.SealedSecret, format string) ([]byte, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode sealed secret: %w", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("encode sealed secret: %w", err)
	}
	dropNullTimestamp(obj)
	if spec, ok := obj["spec"].(map[string]any); ok {
		if tpl, ok := spec["template"].(map[string]any); ok {
			dropNullTimestamp(tpl)
		}
	}
	delete(obj, "status")
	if format == "json" {
		out, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode sealed secret: %w", err)
		}
		return append(out, '\n'), nil
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode sealed secret: %w", err)
	}
	return out, nil
}

// dropNullTimestamp removes metadata.creationTimestamp when it is null.
func dropNullTimestamp(obj map[string]any) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	if v, ok := md["creationTimestamp"]; ok && v == nil {
		delete(md, "creationTimestamp")
	}
}
