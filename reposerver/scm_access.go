package reposerver

// SCMAccess is what the pull request and SCM provider generators of one
// ApplicationSet may send to providers' APIs, read and decided by the
// controller: the tokens their tokenRefs name (Secrets of the ApplicationSet's namespace labelled
// argocd.argoproj.io/secret-type: scm-creds, scoped to its project), the
// CA certificates their caRefs name, and the API URLs the controller
// allows. The repo-server checks every request with it before it is made.
type SCMAccess struct {
	Tokens []SCMToken `json:"tokens,omitempty"`
	CAs    []SCMCA    `json:"cas,omitempty"`
	// Allowed are the API URLs a generator may name
	// (--allowed-scm-providers); empty allows every one. A generator that
	// names none (a provider's public API) is always allowed, as in Argo CD.
	Allowed []string `json:"allowed,omitempty"`
}

// SCMToken is the value of one tokenRef.
type SCMToken struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
	Token      string `json:"token"`
	// URL is the Secret's url: the API the token may be sent to. Without
	// it, the token goes to the provider's public API only.
	URL string `json:"url,omitempty"`
}

// SCMCA is the value of one caRef.
type SCMCA struct {
	ConfigMapName string `json:"configMapName"`
	Key           string `json:"key"`
	PEM           []byte `json:"pem"`
}
