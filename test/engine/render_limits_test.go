package engine_test

import (
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/test/gitserver"
)

// TestLimitsCostOneApplication: a tenant with push access to a permitted
// repository, or a hostile Git server, tries to take the engine down with a
// chart that loops forever, a chart that allocates without bound, a
// Kustomize overlay that explodes, a Git server that trickles bytes and a 5
// GB repository. Each costs its own Application only: a ComparisonError
// naming the limit, within the limit's time; the repo-server keeps serving
// and a healthy Application next to them syncs, and syncs its next commit.
func TestLimitsCostOneApplication(t *testing.T) {
	files := baseFiles()
	files["loop/Chart.yaml"] = "apiVersion: v2\nname: loop\nversion: 0.1.0\n"
	files["loop/templates/cm.yaml"] = "{{- range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}\n"
	files["hog/Chart.yaml"] = "apiVersion: v2\nname: hog\nversion: 0.1.0\n"
	files["hog/templates/cm.yaml"] = "{{- $s := \"x\" }}{{ range until 40 }}{{ $s = printf \"%s%s\" $s $s }}{{ end }}\nkind: ConfigMap\ndata: {size: {{ len $s | quote }}}\n"
	for k, v := range explodingOverlay("boom", 24) {
		files[k] = v
	}
	trickle := trickleGitServer(t)
	huge := hugeGitServer(t, 5<<30)
	f := newFixture(t, files)
	f.repos = append(f.repos, trickle, huge)
	f.application(&v1alpha1.SyncPolicyAutomated{}, nil)

	bad := []struct {
		name, repoURL, path, limit string
		within                     time.Duration
	}{
		{"loop", f.repoURL, "loop", "render stopped: it passed its time limit (" + renderTimeout.String() + ")", renderTimeout},
		{"hog", f.repoURL, "hog", "render stopped: it passed its memory limit (" + fmt.Sprint(renderMemory>>20) + " MiB)", renderTimeout},
		{"boom", f.repoURL, "boom/l24", "render stopped: it passed its", renderTimeout},
		{"trickle", trickle, "", "fetch stopped: it passed its time limit (" + fetchTimeout.String() + ")", fetchTimeout},
		{"huge", huge, "", "fetch stopped: it passed its size limit (" + fmt.Sprint(maxFetchBytes>>20) + " MiB)", fetchTimeout},
	}
	start := time.Now()
	apps := make([]*v1alpha1.Application, len(bad))
	for i, b := range bad {
		apps[i] = &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: f.name + "-" + b.name, Namespace: f.cp},
			Spec: v1alpha1.ApplicationSpec{
				Project:     f.name,
				Source:      &v1alpha1.ApplicationSource{RepoURL: b.repoURL, Path: b.path, TargetRevision: gitserver.DefaultBranch},
				Destination: v1alpha1.ApplicationDestination{Server: inCluster, Namespace: f.ns},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
			},
		}
		f.create(apps[i])
	}
	for i, b := range bad {
		app := apps[i]
		eventually(t, b.name+": a ComparisonError naming the limit", func() (bool, string) {
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(app), app); err != nil {
				return false, err.Error()
			}
			msg, ok := condition(app, v1alpha1.ApplicationConditionComparisonError)
			return ok && strings.Contains(msg, b.limit), describeApp(app)
		})
		if len(app.Status.Resources) != 0 || app.Status.OperationState != nil {
			t.Errorf("%s synced something: %s", b.name, describeApp(app))
		}
	}
	// Every bad Application was reported within its limit's time, plus the
	// repo-server's queue and the engine's resync; all ran at once.
	if took, most := time.Since(start), 3*fetchTimeout+3*resync; took > most {
		t.Errorf("the limits took %s to be reported, want under %s", took.Round(time.Second), most)
	}
	f.waitSynced(f.head)
	next := f.git.Commit(t, f.repo, map[string]string{"manifests/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n"}, "one more")
	f.waitSynced(next)
}

// explodingOverlay returns a Kustomize tree under dir whose top level,
// dir/l<levels>, includes the level below twice (with two name suffixes),
// down to one ConfigMap: 2^levels objects and as many builds of the base.
func explodingOverlay(dir string, levels int) map[string]string {
	files := map[string]string{
		dir + "/l0/kustomization.yaml": "resources: [cm.yaml]\n",
		dir + "/l0/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
	}
	for i := 1; i <= levels; i++ {
		l := fmt.Sprintf("%s/l%d", dir, i)
		files[l+"/kustomization.yaml"] = "resources: [a, b]\n"
		for _, half := range []string{"a", "b"} {
			files[l+"/"+half+"/kustomization.yaml"] = fmt.Sprintf("resources: [../../l%d]\nnameSuffix: -%s\n", i-1, half)
		}
	}
	return files
}

// advertise answers the ref advertisement of a smart HTTP Git server with
// one branch at sha.
func advertise(w http.ResponseWriter, sha string) {
	w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	_, _ = io.WriteString(w, pkt("# service=git-upload-pack\n")+"0000"+
		pkt(sha+" HEAD\x00symref=HEAD:refs/heads/main\n")+pkt(sha+" refs/heads/main\n")+"0000")
}

// fakeGitServer returns the URL of repository name on a smart HTTP Git
// server that advertises one branch and answers every fetch with NAK and
// then what send writes.
func fakeGitServer(t *testing.T, name string, send func(w http.ResponseWriter, r *http.Request)) string {
	sha := fmt.Sprintf("%040x", len(name))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			advertise(w, sha)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		if _, err := io.WriteString(w, "0008NAK\n"); err == nil {
			send(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + name + ".git"
}

// trickleGitServer returns the URL of a repository whose server advertises
// its refs and then sends the pack a byte every 50 ms.
func trickleGitServer(t *testing.T) string {
	return fakeGitServer(t, "trickle", func(w http.ResponseWriter, r *http.Request) {
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := w.Write([]byte("P")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
}

// hugeGitServer returns the URL of a repository of size bytes: its server
// streams a pack of one incompressible blob that large, generated as it is
// sent (zlib stored blocks of random bytes), so the test costs only what
// the fetch limit lets through.
func hugeGitServer(t *testing.T, size int64) string {
	return fakeGitServer(t, "huge", func(w http.ResponseWriter, r *http.Request) {
		// Pack header: version 2, one object; then a blob header with its
		// size as a varint, and its zlib stream.
		hdr := []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01")
		n := uint64(size)
		b := byte(3<<4) | byte(n&0x0f)
		n >>= 4
		for n > 0 {
			hdr = append(hdr, b|0x80)
			b, n = byte(n&0x7f), n>>7
		}
		hdr = append(hdr, b)
		if _, err := w.Write(hdr); err != nil {
			return
		}
		z, _ := zlib.NewWriterLevel(w, zlib.NoCompression)
		buf := make([]byte, 64<<10)
		rng := rand.New(rand.NewPCG(1, 2))
		for sent := int64(0); sent < size; sent += int64(len(buf)) {
			for i := 0; i < len(buf); i += 8 {
				binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
			}
			if _, err := z.Write(buf); err != nil || r.Context().Err() != nil {
				return
			}
		}
		_ = z.Close()
	})
}
