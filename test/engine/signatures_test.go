package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/engine/desired"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// addGPGKeys adds keys to argocd-gpg-keys-cm of the engine under test
// (creating it), as `argocd gpg add` does, and removes them when the test
// ends. Tests add keys of their own, so they share the ConfigMap safely.
func addGPGKeys(t *testing.T, keys ...*gitserver.SigningKey) {
	t.Helper()
	change := func(ctx context.Context, add bool) error {
		return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			var cm corev1.ConfigMap
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: argoNS, Name: desired.GPGKeysConfigMap}, &cm)
			switch {
			case apierrors.IsNotFound(err) && add:
				cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argoNS, Name: desired.GPGKeysConfigMap}, Data: map[string]string{}}
				for _, k := range keys {
					cm.Data[k.KeyID] = k.Public
				}
				return env.Client.Create(ctx, &cm)
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			}
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			for _, k := range keys {
				if add {
					cm.Data[k.KeyID] = k.Public
				} else {
					delete(cm.Data, k.KeyID)
				}
			}
			return env.Client.Update(ctx, &cm)
		})
	}
	if err := change(t.Context(), true); err != nil {
		t.Fatalf("add gnupg keys: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = change(ctx, false)
	})
}

// signedFixture is a fixture whose AppProject allows commits signed with
// key A, with keys A and B in argocd-gpg-keys-cm (C is unknown to it). Its
// repository's commits so far are unsigned.
func signedFixture(t *testing.T) (f *fixture, a, b, c *gitserver.SigningKey) {
	t.Helper()
	a, b, c = gitserver.NewSigningKey(t, "Alice"), gitserver.NewSigningKey(t, "Bob"), gitserver.NewSigningKey(t, "Carol")
	addGPGKeys(t, a, b)
	f = newFixture(t, map[string]string{"manifests/configmap.yaml": configMap("settings", "unsigned")})
	f.editProject = func(p *v1alpha1.AppProject) {
		p.Spec.SignatureKeys = []v1alpha1.SignatureKey{{KeyID: a.KeyID}}
	}
	return f, a, b, c
}

// refused waits until the Application's ComparisonError is msg, then
// checks over a few resyncs that nothing is applied (not even the dry
// runs of a comparison) and that ConfigMap settings still holds want ("":
// does not exist).
func (f *fixture) refused(msg, want string) {
	f.t.Helper()
	f.waitApp("refused: "+msg, func(a *v1alpha1.Application) bool {
		got, ok := condition(a, v1alpha1.ApplicationConditionComparisonError)
		return ok && got == msg
	})
	before := applies.count(f.ns)
	consistently(f.t, "nothing applied", 3*resync, func() (bool, string) {
		if n := applies.count(f.ns) - before; n != 0 {
			return false, fmt.Sprintf("%d apply requests", n)
		}
		if got := f.settings(); got != want {
			return false, fmt.Sprintf("ConfigMap settings holds %q, want %q", got, want)
		}
		return true, ""
	})
}

// settings returns the value of ConfigMap settings, "" when it does not
// exist.
func (f *fixture) settings() string {
	var cm corev1.ConfigMap
	if err := f.get(&cm, "settings"); err != nil {
		return ""
	}
	return cm.Data["key"]
}

// pushSigned commits files signed with key (nil: unsigned) and notifies the
// engine through its push webhook.
func (f *fixture) pushSigned(files map[string]string, msg string, key *gitserver.SigningKey) string {
	f.t.Helper()
	var sha string
	if key == nil {
		sha = f.git.Commit(f.t, f.repo, files, msg)
	} else {
		sha = f.git.CommitSigned(f.t, f.repo, files, msg, key)
	}
	f.notifyPush(sha)
	return sha
}

// TestSignatureKeys: an AppProject with signatureKeys syncs only commits
// signed with one of its keys, as Argo CD: an unsigned commit, one signed
// with a key argocd-gpg-keys-cm holds but the project does not allow, and
// one signed with a key it does not hold are refused with Argo CD's
// messages, and nothing is applied; a sync operation to an unsigned
// revision fails.
func TestSignatureKeys(t *testing.T) {
	t.Parallel()
	f, a, b, c := signedFixture(t)
	f.application(automated(false, false), nil)
	f.refused("Target revision "+f.head+" in Git is not signed, but a signature is required", "")

	signedA := f.pushSigned(map[string]string{"manifests/configmap.yaml": configMap("settings", "signed-a")}, "signed by A", a)
	f.waitSynced(signedA)
	if got := f.settings(); got != "signed-a" {
		t.Fatalf("ConfigMap settings = %q after the sync of the commit signed with A", got)
	}
	if _, ok := condition(f.app(), v1alpha1.ApplicationConditionComparisonError); ok {
		t.Errorf("ComparisonError still set once a signed commit synced")
	}

	f.pushSigned(map[string]string{"manifests/configmap.yaml": configMap("settings", "signed-b")}, "signed by B", b)
	f.refused(fmt.Sprintf("Found good signature made with EDDSA key %s, but this key is not allowed in AppProject", b.KeyID), "signed-a")

	f.pushSigned(map[string]string{"manifests/configmap.yaml": configMap("settings", "signed-c")}, "signed by C", c)
	f.refused(fmt.Sprintf("Found signature made with EDDSA key %s, but verification result was invalid: 'Can't check signature: No public key'", c.KeyID), "signed-a")

	// A sync operation to the unsigned first commit fails, and applies
	// nothing.
	edit(t, f.app(), func(app *v1alpha1.Application) {
		app.Spec.SyncPolicy.Automated = nil
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: f.head}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	})
	want := "ComparisonError: Target revision " + f.head + " in Git is not signed, but a signature is required"
	f.waitApp("the operation fails", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationError && st.Message == want
	})
	if got := f.settings(); got != "signed-a" {
		t.Errorf("ConfigMap settings = %q after the refused operation, want signed-a", got)
	}
	// One to the commit signed with A runs.
	edit(t, f.app(), func(app *v1alpha1.Application) {
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: signedA}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	})
	f.waitApp("the operation to the signed commit succeeds", func(a *v1alpha1.Application) bool {
		st := a.Status.OperationState
		return a.Operation == nil && st != nil && st.Phase == v1alpha1.OperationSucceeded && st.SyncResult != nil && st.SyncResult.Revision == signedA
	})
}

// TestSignatureKeysMultipleSources: every Git source of a multi-source
// Application is verified, a ref source's too.
func TestSignatureKeysMultipleSources(t *testing.T) {
	t.Parallel()
	f, a, _, _ := signedFixture(t)
	valuesURL := f.git.CreateRepo(t, "values", map[string]string{"values.yaml": "x: 1\n"})
	values := f.git.Head(t, "values", gitserver.DefaultBranch)
	f.repos = append(f.repos, valuesURL)
	signed := f.git.CommitSigned(t, f.repo, map[string]string{"manifests/configmap.yaml": configMap("settings", "signed-a")}, "signed by A", a)
	f.application(automated(false, false), func(app *v1alpha1.Application) {
		app.Spec.Sources = []v1alpha1.ApplicationSource{
			*app.Spec.Source,
			{RepoURL: valuesURL, TargetRevision: gitserver.DefaultBranch, Ref: "values"},
		}
		app.Spec.Source = nil
	})
	f.refused("Target revision "+values+" in Git is not signed, but a signature is required", "")

	valuesSigned := f.git.CommitSigned(t, "values", map[string]string{"values.yaml": "x: 2\n"}, "signed values", a)
	f.refresh()
	f.waitApp("synced once every source is signed", func(app *v1alpha1.Application) bool {
		st := app.Status.OperationState
		return app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(app.Status.Sync.Revisions) == 2 &&
			app.Status.Sync.Revisions[0] == signed && app.Status.Sync.Revisions[1] == valuesSigned &&
			st != nil && st.Phase == v1alpha1.OperationSucceeded
	})
	if got := f.settings(); got != "signed-a" {
		t.Errorf("ConfigMap settings = %q, want signed-a", got)
	}
}

// TestNoSignatureKeys: without signatureKeys, unsigned commits sync.
func TestNoSignatureKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"manifests/configmap.yaml": configMap("settings", "unsigned")})
	f.application(automated(false, false), nil)
	f.waitSynced(f.head)
	if got := f.settings(); got != "unsigned" {
		t.Errorf("ConfigMap settings = %q, want unsigned", got)
	}
}
