package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ssv1alpha1 "github.com/bitnami-labs/sealed-secrets/pkg/apis/sealedsecrets/v1alpha1"
	sscrypto "github.com/bitnami-labs/sealed-secrets/pkg/crypto"
	"github.com/google/go-cmp/cmp"
	"github.com/tollgate-dev/tollgate/test/testutil"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// sealingKey is the key pair of a test sealed-secrets controller.
type sealingKey struct {
	priv     *rsa.PrivateKey
	certFile string
}

func newSealingKey(t *testing.T) sealingKey {
	t.Helper()
	priv, cert, err := sscrypto.GeneratePrivateKeyAndCert(2048, time.Hour, "sealed-secret")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cert.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return sealingKey{priv: priv, certFile: file}
}

// unseal decrypts a SealedSecret document with the test key, after
// optionally moving it to another namespace and name.
func (k sealingKey) unseal(t *testing.T, doc []byte, namespace, name string) (map[string]string, error) {
	t.Helper()
	var ss ssv1alpha1.SealedSecret
	if err := yaml.Unmarshal(doc, &ss); err != nil {
		t.Fatalf("decode sealed secret: %v\n%s", err, doc)
	}
	if namespace != "" {
		ss.Namespace, ss.Spec.Template.Namespace = namespace, namespace
	}
	if name != "" {
		ss.Name, ss.Spec.Template.Name = name, name
	}
	secret, err := ss.Unseal(scheme.Codecs, map[string]*rsa.PrivateKey{"k": k.priv})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for key, v := range secret.Data {
		out[key] = string(v)
	}
	return out, nil
}

const plainSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: billing
  labels: {app: billing}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"password":"hunter2"}}'
type: Opaque
data:
  user: YWRtaW4=
stringData:
  password: hunter2
`

func TestSealRoundTrip(t *testing.T) {
	key := newSealingKey(t)
	want := map[string]string{"user": "admin", "password": "hunter2"}
	tests := []struct {
		name  string
		args  []string
		stdin string
		// moveNS and moveName relocate the SealedSecret before unsealing.
		moveNS, moveName string
		wantUnsealErr    bool
		wantAnnotation   string
	}{
		{name: "strict", args: []string{"secret.yaml"}},
		{name: "strict from stdin as json", args: []string{"-o", "json", "-"}, stdin: plainSecret},
		{name: "strict refuses another name", args: []string{"secret.yaml"}, moveName: "other", wantUnsealErr: true},
		{name: "strict refuses another namespace", args: []string{"secret.yaml"}, moveNS: "other", wantUnsealErr: true},
		{
			name: "namespace-wide allows another name", args: []string{"--scope", "namespace-wide", "secret.yaml"},
			moveName: "other", wantAnnotation: ssv1alpha1.SealedSecretNamespaceWideAnnotation,
		},
		{
			name: "namespace-wide refuses another namespace", args: []string{"--scope", "namespace-wide", "secret.yaml"},
			moveNS: "other", wantUnsealErr: true, wantAnnotation: ssv1alpha1.SealedSecretNamespaceWideAnnotation,
		},
		{
			name: "cluster-wide allows anywhere", args: []string{"--scope", "cluster-wide", "secret.yaml"},
			moveNS: "other", moveName: "other", wantAnnotation: ssv1alpha1.SealedSecretClusterWideAnnotation,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, map[string]string{"secret.yaml": plainSecret})
			args := []string{"seal", "--cert", key.certFile}
			for _, a := range tt.args {
				if a == "secret.yaml" {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			var stdin io.Reader
			if tt.stdin != "" {
				stdin = strings.NewReader(tt.stdin)
			}
			r := runCLI(t, stdin, args...)
			if r.code != exitOK {
				t.Fatalf("exit code = %d, want 0 (error %q)", r.code, r.err)
			}
			for _, leak := range []string{"hunter2", "YWRtaW4=", "last-applied"} {
				if strings.Contains(r.stdout, leak) {
					t.Errorf("output contains %q:\n%s", leak, r.stdout)
				}
			}
			var ss ssv1alpha1.SealedSecret
			if err := yaml.Unmarshal([]byte(r.stdout), &ss); err != nil {
				t.Fatal(err)
			}
			if ss.APIVersion != "bitnami.com/v1alpha1" || ss.Kind != "SealedSecret" || ss.Name != "db" || ss.Namespace != "billing" {
				t.Errorf("got %s %s %s/%s, want bitnami.com/v1alpha1 SealedSecret billing/db", ss.APIVersion, ss.Kind, ss.Namespace, ss.Name)
			}
			if diff := cmp.Diff(map[string]string{"app": "billing"}, ss.Spec.Template.Labels); diff != "" {
				t.Errorf("template labels mismatch (-want +got):\n%s", diff)
			}
			if tt.wantAnnotation != "" && ss.Annotations[tt.wantAnnotation] != "true" {
				t.Errorf("annotations = %v, want %s: \"true\"", ss.Annotations, tt.wantAnnotation)
			}
			got, err := key.unseal(t, []byte(r.stdout), tt.moveNS, tt.moveName)
			if tt.wantUnsealErr {
				if err == nil {
					t.Fatalf("unseal after moving to %q/%q succeeded, want an error", tt.moveNS, tt.moveName)
				}
				return
			}
			if err != nil {
				t.Fatalf("unseal: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unsealed data mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSealOutputPassesTest checks that what seal writes is what the
// no-plaintext-secret rule asks for.
func TestSealOutputPassesTest(t *testing.T) {
	key := newSealingKey(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"secret.yaml": plainSecret})
	if r := runCLI(t, nil, "test", filepath.Join(dir, "secret.yaml")); r.code != exitDenied {
		t.Fatalf("test of the plain Secret: exit code = %d, want %d", r.code, exitDenied)
	}
	r := runCLI(t, nil, "seal", "--cert", key.certFile, filepath.Join(dir, "secret.yaml"))
	if r.code != exitOK {
		t.Fatalf("seal: exit code = %d (error %q)", r.code, r.err)
	}
	testutil.WriteFiles(t, dir, map[string]string{"sealed.yaml": r.stdout})
	if r := runCLI(t, nil, "test", filepath.Join(dir, "sealed.yaml")); r.code != exitOK {
		t.Errorf("test of the SealedSecret: exit code = %d, want 0\n%s", r.code, r.stdout)
	}
}

func TestSealErrors(t *testing.T) {
	key := newSealingKey(t)
	dir := t.TempDir()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ec"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(time.Hour)}
	ecDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ecKey.PublicKey, ecKey)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, dir, map[string]string{
		"ec.pem":         string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ecDER})),
		"notpem.pem":     "hello\n",
		"garbage.pem":    string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})),
		"secret.yaml":    plainSecret,
		"cm.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n",
		"nons.yaml":      "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n",
		"noname.yaml":    "apiVersion: v1\nkind: Secret\nmetadata: {namespace: n}\nstringData: {a: b}\n",
		"two.yaml":       plainSecret + "---\n" + plainSecret,
		"badb64.yaml":    "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata: {a: '%%%'}\n",
		"malformed.yaml": "apiVersion: v1\nkind: Secret\nmetadata: [\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"not a secret", []string{"--cert", key.certFile, p("cm.yaml")}, "is v1 ConfigMap, want a v1 Secret"},
		{"strict needs a namespace", []string{"--cert", key.certFile, p("nons.yaml")}, "has no metadata.namespace, which strict scope binds it to"},
		{"namespace-wide needs a namespace", []string{"--cert", key.certFile, "--scope", "namespace-wide", p("nons.yaml")}, "which namespace-wide scope binds it to"},
		{"missing name", []string{"--cert", key.certFile, "--scope", "cluster-wide", p("noname.yaml")}, "has no metadata.name"},
		{"two documents", []string{"--cert", key.certFile, p("two.yaml")}, "want exactly one Kubernetes object, found 2"},
		{"bad base64", []string{"--cert", key.certFile, p("badb64.yaml")}, "badb64.yaml: illegal base64 data"},
		{"malformed secret", []string{"--cert", key.certFile, p("malformed.yaml")}, "malformed.yaml: document 1"},
		{"missing secret", []string{"--cert", key.certFile, p("nope.yaml")}, "nope.yaml: no such file"},
		{"not PEM", []string{"--cert", p("notpem.pem"), p("secret.yaml")}, "no PEM CERTIFICATE block"},
		{"broken certificate", []string{"--cert", p("garbage.pem"), p("secret.yaml")}, "load certificate " + p("garbage.pem") + ": x509"},
		{"EC certificate", []string{"--cert", p("ec.pem"), p("secret.yaml")}, "sealed secrets need RSA"},
		{"missing cert flag", []string{p("secret.yaml")}, `required flag(s) "cert" not set`},
		{"bad scope", []string{"--cert", key.certFile, "--scope", "global", p("secret.yaml")}, `invalid --scope "global"`},
		{"bad output", []string{"--cert", key.certFile, "-o", "toml", p("secret.yaml")}, `invalid --output "toml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, nil, append([]string{"seal"}, tt.args...)...)
			if r.code != exitUsage {
				t.Fatalf("exit code = %d, want %d (stdout %q)", r.code, exitUsage, r.stdout)
			}
			if !strings.Contains(r.err, tt.wantErr) {
				t.Errorf("error = %q, want it to contain %q", r.err, tt.wantErr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}
