package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/engine/argocd"
	"github.com/tollgate-dev/tollgate/reposerver"
)

// repoAddOptions are the flags of `tollgate repo add`, argocd repo add's.
type repoAddOptions struct {
	clusterTarget
	url                      string
	typ, name, project       string
	username, password       string
	bearerToken              string
	sshPrivateKeyPath        string
	tlsClientCertPath        string
	tlsClientCertKeyPath     string
	insecureIgnoreHostKey    bool
	insecureSkipServerVerify bool
	enableLFS, enableOCI     bool
	proxy, noProxy           string
	forceHTTPBasicAuth       bool
	depth                    int64
	upsert                   bool
	// stdin gives the password when --username comes without --password.
	stdin io.Reader
}

func newRepoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repo",
		Short: "Manage repository credentials (Argo CD repository Secrets), like argocd repo",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageError(errors.New("missing subcommand: see tollgate repo --help"))
		},
	}
	cmd.AddCommand(newRepoAddCmd(), newRepoListCmd(), newRepoRmCmd())
	return cmd
}

func newRepoAddCmd() *cobra.Command {
	o := repoAddOptions{}
	cmd := &cobra.Command{
		Use:   "add REPOURL",
		Short: "Add a Git or Helm repository's credentials, like argocd repo add",
		Long: `Write the repository Secret of REPOURL as Argo CD's repo add does: labelled
argocd.argoproj.io/secret-type: repository, named repo-<hash of the URL and
project>, with the keys url, type, name, project, username, password,
bearerToken, sshPrivateKey, tlsClientCertData, tlsClientCertKey, insecure,
insecureIgnoreHostKey, enableOCI, enableLfs, proxy, noProxy,
forceHttpBasicAuth and depth that are set. It goes into --argocd-namespace
of the cluster your kubeconfig points at, with your kubeconfig.

--username without --password asks for the password on a terminal, or
reads its first line from stdin. A Secret for the same URL and project is
left alone when equal and refused when it differs, unless --upsert.

Unlike argocd, the repository is not fetched first: the controller reports
an Application whose repository cannot be read.

Exit status: 0 when the repository was added; 2 on usage errors, a key file
that cannot be read, or an existing repository Secret that differs.`,
		Example: `  tollgate repo add git@git.example.com:repos/repo --ssh-private-key-path ~/id_rsa
  tollgate repo add https://git.example.com/repos/repo --username git --password secret
  tollgate repo add https://charts.helm.sh/stable --type helm --name stable`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.url, o.stdin = args[0], cmd.InOrStdin()
			secret, err := o.secret(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			if err := writeRepoSecret(cmd.Context(), c, secret, o.upsert); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Repository '%s' added\n", o.url)
			return nil
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.upsert, "upsert", false, "Override an existing repository with the same name even if the spec differs")
	f.StringVar(&o.typ, "type", "git", `type of the repository, "git" or "helm"`)
	f.StringVar(&o.name, "name", "", "name of the repository, mandatory for repositories of type helm")
	f.StringVar(&o.project, "project", "", "project of the repository")
	f.StringVar(&o.username, "username", "", "username to the repository")
	f.StringVar(&o.password, "password", "", "password to the repository")
	f.StringVar(&o.bearerToken, "bearer-token", "", "bearer token to the Git BitBucket Data Center repository")
	f.StringVar(&o.sshPrivateKeyPath, "ssh-private-key-path", "", "path to the private ssh key (e.g. ~/.ssh/id_rsa)")
	f.StringVar(&o.tlsClientCertPath, "tls-client-cert-path", "", "path to the TLS client cert (must be PEM format)")
	f.StringVar(&o.tlsClientCertKeyPath, "tls-client-cert-key-path", "", "path to the TLS client cert's key (must be PEM format)")
	f.BoolVar(&o.insecureIgnoreHostKey, "insecure-ignore-host-key", false, "disables SSH strict host key checking (deprecated, use --insecure-skip-server-verification instead)")
	f.BoolVar(&o.insecureSkipServerVerify, "insecure-skip-server-verification", false, "disables server certificate and host key checks")
	f.BoolVar(&o.enableLFS, "enable-lfs", false, "enable git-lfs (Large File Support) on this repository")
	f.BoolVar(&o.enableOCI, "enable-oci", false, "enable helm-oci (Helm OCI-Based Repository) (only valid for helm type repositories)")
	f.StringVar(&o.proxy, "proxy", "", "use proxy to access repository")
	f.StringVar(&o.noProxy, "no-proxy", "", "don't access these targets via proxy")
	f.BoolVar(&o.forceHTTPBasicAuth, "force-http-basic-auth", false, "whether to force use of basic auth when connecting repository via HTTP")
	f.Int64Var(&o.depth, "depth", 0, "Specify a custom depth for git clone operations. Unless specified, a full clone is performed using the depth of 0")
	return cmd
}

// secret checks the flags as argocd repo add does and builds the
// repository Secret; prompts for a password go to prompt.
func (o *repoAddOptions) secret(prompt io.Writer) (*corev1.Secret, error) {
	var sshKey, certData, certKey []byte
	if o.sshPrivateKeyPath != "" {
		if !argocd.IsSSH(o.url) {
			return nil, usageError(errors.New("--ssh-private-key-path is only supported for SSH repositories."))
		}
		var err error
		if sshKey, err = os.ReadFile(o.sshPrivateKeyPath); err != nil {
			return nil, usageError(fmt.Errorf("--ssh-private-key-path: %w", err))
		}
	}
	if (o.tlsClientCertPath == "") != (o.tlsClientCertKeyPath == "") {
		return nil, usageError(errors.New("--tls-client-cert-path and --tls-client-cert-key-path must be specified together"))
	}
	isHTTPS := strings.HasPrefix(strings.ToLower(o.url), "https://")
	if o.tlsClientCertPath != "" {
		if !isHTTPS {
			return nil, usageError(errors.New("--tls-client-cert-path is only supported for HTTPS repositories"))
		}
		var err error
		if certData, err = os.ReadFile(o.tlsClientCertPath); err != nil {
			return nil, usageError(fmt.Errorf("--tls-client-cert-path: %w", err))
		}
		if certKey, err = os.ReadFile(o.tlsClientCertKeyPath); err != nil {
			return nil, usageError(fmt.Errorf("--tls-client-cert-key-path: %w", err))
		}
	}
	switch o.typ {
	case "git", "helm":
	default:
		return nil, usageError(fmt.Errorf(`invalid --type %q: want git or helm`, o.typ))
	}
	if o.typ == "helm" && o.name == "" {
		return nil, usageError(errors.New("Must specify --name for repos of type 'helm'"))
	}
	if o.username != "" && o.password == "" {
		pw, err := readPassword(o.stdin, prompt)
		if err != nil {
			return nil, usageError(fmt.Errorf("read the password of --username %s: %w", o.username, err))
		}
		o.password = pw
	}
	switch {
	case o.bearerToken != "" && o.password != "":
		return nil, usageError(errors.New("only --bearer-token or --password is allowed, not both"))
	case o.bearerToken != "" && o.typ != "git":
		return nil, usageError(errors.New("--bearer-token is only supported for Git repositories"))
	case o.bearerToken != "" && !isHTTPS:
		return nil, usageError(errors.New("--bearer-token is only supported for HTTPS repositories"))
	}
	data := map[string][]byte{}
	str := func(k, v string) {
		if v != "" {
			data[k] = []byte(v)
		}
	}
	flag := func(k string, v bool) {
		if v {
			data[k] = []byte("true")
		}
	}
	str("name", o.name)
	str("project", o.project)
	str("url", o.url)
	str("username", o.username)
	str("password", o.password)
	str("bearerToken", o.bearerToken)
	str("sshPrivateKey", string(sshKey))
	flag("enableOCI", o.enableOCI)
	str("tlsClientCertData", string(certData))
	str("tlsClientCertKey", string(certKey))
	str("type", o.typ)
	flag("insecureIgnoreHostKey", o.insecureIgnoreHostKey)
	flag("insecure", o.insecureSkipServerVerify)
	flag("enableLfs", o.enableLFS)
	str("proxy", o.proxy)
	str("noProxy", o.noProxy)
	flag("forceHttpBasicAuth", o.forceHTTPBasicAuth)
	if o.depth != 0 {
		data["depth"] = []byte(strconv.FormatInt(o.depth, 10))
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: repoSecretName(o.url, o.project), Namespace: o.namespace}, Data: data}
	markArgoCDSecret(s, argocd.SecretTypeRepository)
	return s, nil
}

// readPassword reads a password from a terminal without echo, or the
// first line of in.
func readPassword(in io.Reader, prompt io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, "Password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		return string(b), err
	}
	line, err := bufio.NewReader(io.LimitReader(in, 64<<10)).ReadString('\n')
	if line = strings.TrimRight(line, "\r\n"); line == "" {
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("no password on stdin; give --password")
		}
		return "", err
	}
	return line, nil
}

// errRepoDiffers is Argo CD's refusal of a repository that exists with
// another spec.
var errRepoDiffers = errors.New("existing repository spec is different; use upsert flag to force update")

// repoSecrets lists the repository Secrets of ns.
func repoSecrets(ctx context.Context, c client.Client, ns string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{argocd.SecretTypeLabel: argocd.SecretTypeRepository}); err != nil {
		return nil, fmt.Errorf("list repository secrets in %s: %w", ns, err)
	}
	return list.Items, nil
}

// findRepoSecret is the Secret of secrets for url (the same once
// normalized) and project, as Argo CD's db finds one.
func findRepoSecret(secrets []corev1.Secret, url, project string) int {
	return slices.IndexFunc(secrets, func(s corev1.Secret) bool {
		return reposerver.NormalizeURL(string(s.Data["url"])) == reposerver.NormalizeURL(url) && string(s.Data["project"]) == project
	})
}

// writeRepoSecret creates want or, when the repository has a Secret,
// leaves it alone when equal, updates it with upsert (keys it holds that
// want does not are emptied, as Argo CD's db does) and refuses otherwise.
func writeRepoSecret(ctx context.Context, c client.Client, want *corev1.Secret, upsert bool) error {
	secrets, err := repoSecrets(ctx, c, want.Namespace)
	if err != nil {
		return err
	}
	i := findRepoSecret(secrets, string(want.Data["url"]), string(want.Data["project"]))
	if i < 0 {
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("create repository secret %s: %w", want.Name, err)
		}
		return nil
	}
	cur := &secrets[i]
	data := maps.Clone(want.Data)
	for k := range cur.Data {
		if _, ok := data[k]; !ok && repoSecretKeys[k] {
			data[k] = []byte{}
		}
		if !repoSecretKeys[k] {
			data[k] = cur.Data[k]
		}
	}
	if maps.EqualFunc(cur.Data, data, bytes.Equal) {
		return nil
	}
	if !upsert {
		return usageError(errRepoDiffers)
	}
	cur.Data = data
	markArgoCDSecret(cur, argocd.SecretTypeRepository)
	if err := c.Update(ctx, cur); err != nil {
		return fmt.Errorf("update repository secret %s: %w", cur.Name, err)
	}
	return nil
}

// repoSecretKeys are the keys repo add writes.
var repoSecretKeys = map[string]bool{"name": true, "project": true, "url": true, "username": true, "password": true, "bearerToken": true,
	"sshPrivateKey": true, "enableOCI": true, "tlsClientCertData": true, "tlsClientCertKey": true, "type": true, "insecureIgnoreHostKey": true,
	"insecure": true, "enableLfs": true, "proxy": true, "noProxy": true, "forceHttpBasicAuth": true, "depth": true}

func newRepoListCmd() *cobra.Command {
	o := clusterTarget{}
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List repositories, like argocd repo list",
		Long: `List the repository Secrets of the control-plane namespace in argocd repo
list's table (-o url: the URLs only). STATUS and MESSAGE are empty: the
repository is not fetched.

Exit status: 0; 2 on usage errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "wide" && output != "url" {
				return usageError(fmt.Errorf("unknown output format: %s. Supported formats: url|wide", output))
			}
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			secrets, err := repoSecrets(cmd.Context(), c, o.namespace)
			if err != nil {
				return err
			}
			return writeRepos(cmd.OutOrStdout(), secrets, output)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "Output format. Supported formats: url|wide")
	return cmd
}

// writeRepos prints secrets as argocd repo list does.
func writeRepos(w io.Writer, secrets []corev1.Secret, output string) error {
	slices.SortFunc(secrets, func(a, b corev1.Secret) int { return strings.Compare(string(a.Data["url"]), string(b.Data["url"])) })
	if output == "url" {
		for _, s := range secrets {
			fmt.Fprintln(w, string(s.Data["url"]))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "TYPE\tNAME\tREPO\tINSECURE\tOCI\tLFS\tCREDS\tSTATUS\tMESSAGE\tPROJECT\n")
	for i := range secrets {
		s := &secrets[i]
		v := func(k string) string { return reposerver.SecretValue(s, k) }
		insecure := argocd.SecretFlag(s, "insecure") || argocd.SecretFlag(s, "insecureIgnoreHostKey")
		creds := v("username") != "" || v("password") != "" || v("sshPrivateKey") != "" || v("tlsClientCertData") != "" || v("bearerToken") != ""
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%t\t%t\t%t\t\t\t%s\n", cmpOr(v("type"), "git"), v("name"), v("url"), insecure,
			argocd.SecretFlag(s, "enableOCI"), argocd.SecretFlag(s, "enableLfs"), creds, v("project"))
	}
	return tw.Flush()
}

func newRepoRmCmd() *cobra.Command {
	o := clusterTarget{}
	var project string
	cmd := &cobra.Command{
		Use:   "rm REPO...",
		Short: "Remove repositories, like argocd repo rm",
		Long: `Delete the repository Secret of each REPO (of --project), asking first on a
terminal with argocd's question.

Exit status: 0 when each was removed or its removal cancelled; 2 on usage
errors or when a repository has no Secret.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			return removeRepos(cmd.Context(), c, o.namespace, project, args, stdinIsTerminal(), cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&project, "project", "", "project of the repository")
	return cmd
}

// removeRepos deletes the repository Secrets of urls, asking on in first
// when prompt.
func removeRepos(ctx context.Context, c client.Client, ns, project string, urls []string, prompt bool, in io.Reader, out io.Writer) error {
	secrets, err := repoSecrets(ctx, c, ns)
	if err != nil {
		return err
	}
	answers := bufio.NewReader(in)
	for _, u := range urls {
		i := findRepoSecret(secrets, u, project)
		if i < 0 {
			return usageError(fmt.Errorf("repository %q not found", u))
		}
		if prompt && !askToProceed(answers, out, fmt.Sprintf("Are you sure you want to delete repository '%s'? [y/n]", u)) {
			fmt.Fprintf(out, "The command to delete '%s' was cancelled.\n", u)
			continue
		}
		if err := c.Delete(ctx, &secrets[i]); err != nil {
			return fmt.Errorf("delete repository secret %s: %w", secrets[i].Name, err)
		}
		fmt.Fprintf(out, "Repository '%s' removed\n", u)
	}
	return nil
}
