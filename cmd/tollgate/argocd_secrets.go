package main

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"

	"github.com/tollgate-dev/tollgate/engine/argocd"
)

// Argo CD's marks on the Secrets its CLI writes.
const (
	annotationManagedBy       = "managed-by"
	annotationManagedByArgoCD = "argocd.argoproj.io"
	secretTypeCluster         = "cluster"
)

// uriSecretName is the name Argo CD's db gives the Secret of uri
// (URIToSecretName): kind, the lower-cased host without its port, and
// the FNV-32a hash of the whole URI.
func uriSecretName(kind, uri string) (string, error) {
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return "", err
	}
	host := u.Host
	if strings.HasPrefix(host, "[") {
		if last := strings.Index(host, "]"); last >= 0 {
			addr, err := netip.ParseAddr(host[1:last])
			if err != nil {
				return "", err
			}
			host = strings.ReplaceAll(addr.String(), ":", "-")
		}
	} else if i := strings.Index(host, ":"); i >= 0 {
		host = host[:i]
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(uri))
	return fmt.Sprintf("%s-%s-%d", kind, strings.ToLower(host), h.Sum32()), nil
}

// repoSecretName is the name Argo CD's db gives a repository's Secret
// (RepoURLToSecretName): repo- and the FNV-32a hash of the URL and the
// project.
func repoSecretName(repoURL, project string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(repoURL))
	_, _ = h.Write([]byte(project))
	return fmt.Sprintf("repo-%d", h.Sum32())
}

// markArgoCDSecret sets the secret-type label and the managed-by
// annotation Argo CD's db sets (addSecretMetadata) on s.
func markArgoCDSecret(s *corev1.Secret, secretType string) {
	s.Annotations = maps.Clone(s.Annotations)
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[annotationManagedBy] = annotationManagedByArgoCD
	s.Labels = maps.Clone(s.Labels)
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[argocd.SecretTypeLabel] = secretType
}

// userMetadata is m without the marks markArgoCDSecret sets, as Argo CD
// reads a cluster's labels and annotations back from its Secret.
func userMetadata(m map[string]string) map[string]string {
	out := maps.Clone(m)
	delete(out, argocd.SecretTypeLabel)
	delete(out, annotationManagedBy)
	delete(out, corev1.LastAppliedConfigAnnotation)
	if len(out) == 0 {
		return nil
	}
	return out
}

// stdinIsTerminal reports whether prompts can be answered.
func stdinIsTerminal() bool { return term.IsTerminal(int(os.Stdin.Fd())) }

// askToProceed asks question until y/yes or n/no is answered, as argocd's
// cli.AskToProceed does; end of input is no.
func askToProceed(in *bufio.Reader, out io.Writer, question string) bool {
	for {
		fmt.Fprint(out, question)
		line, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true
		case "n", "no":
			return false
		}
		if err != nil {
			return false
		}
	}
}
