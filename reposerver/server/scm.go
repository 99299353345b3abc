package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
)

// scmAuth is what the SCM generator at field, whose provider is p, may
// send to that provider, or why it may not ask it: its api must be in
// a.Allowed (when set; a public API always is), and its token goes only
// to the API its Secret's url names (the provider's public API without
// one).
func scmAuth(a *reposerver.SCMAccess, field string, p v1alpha1.SCMProviderRef) (scm.Auth, error) {
	field += "." + p.Name
	if p.API != "" && len(a.Allowed) > 0 && !slices.ContainsFunc(a.Allowed, func(u string) bool { return sameAPI(u, p.API) }) {
		return scm.Auth{}, fmt.Errorf("%s.api: scm provider not allowed: scm provider %q not allowed, must use one of the following: %s", field, p.API, strings.Join(a.Allowed, ", "))
	}
	target := p.API
	if target == "" {
		target = scm.PublicAPI(p.Name)
	}
	auth := scm.Auth{Insecure: p.Insecure}
	if ref := p.TokenRef; ref != nil {
		i := slices.IndexFunc(a.Tokens, func(t reposerver.SCMToken) bool { return t.SecretName == ref.SecretName && t.Key == ref.Key })
		if i < 0 {
			return scm.Auth{}, fmt.Errorf("%s.tokenRef: key %q of Secret %q was not read by the controller (a tokenRef rendered from parameters is not read)", field, ref.Key, ref.SecretName)
		}
		tok := a.Tokens[i]
		bound := tok.URL
		if bound == "" {
			bound = scm.PublicAPI(p.Name)
		}
		if bound == "" || !sameAPI(bound, target) {
			why := fmt.Sprintf("is for %s (its url)", tok.URL)
			if tok.URL == "" {
				why = "names no url, so its token goes to the provider's public API only"
				if scm.PublicAPI(p.Name) == "" {
					why = "names no url, and " + p.Name + " has no public API"
				}
			}
			return scm.Auth{}, fmt.Errorf("%s.tokenRef: Secret %q %s, not to %s; the token was not sent: set the Secret's url to the API it is for", field, ref.SecretName, why, target)
		}
		auth.Token = tok.Token
	}
	if ref := p.CARef; ref != nil {
		i := slices.IndexFunc(a.CAs, func(c reposerver.SCMCA) bool { return c.ConfigMapName == ref.ConfigMapName && c.Key == ref.Key })
		if i < 0 {
			return scm.Auth{}, fmt.Errorf("%s.caRef: key %q of ConfigMap %q was not read by the controller", field, ref.Key, ref.ConfigMapName)
		}
		auth.CA = a.CAs[i].PEM
	}
	return auth, nil
}

// sameAPI reports whether two API URLs are the same: scheme and host
// compared without case, paths without a trailing slash.
func sameAPI(a, b string) bool {
	ua, err1 := url.Parse(strings.TrimRight(a, "/"))
	ub, err2 := url.Parse(strings.TrimRight(b, "/"))
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) && ua.Path == ub.Path
}
