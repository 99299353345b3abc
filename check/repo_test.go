package check

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/test/testutil"
)

const gitConfigWithOrigin = `[core]
	bare = false
[remote "upstream"]
	url = https://github.com/upstream/config.git
	fetch = +refs/heads/*:refs/remotes/upstream/*
[remote "origin"]
	url = https://github.com/acme/config.git
	fetch = +refs/heads/*:refs/remotes/origin/*
`

func TestOriginURL(t *testing.T) {
	tests := []struct {
		name string
		// files are created in a temporary directory; dir is where the
		// lookup starts, relative to it.
		files   map[string]string
		dir     string
		want    string
		wantErr string
	}{
		{
			name:  "repository root",
			files: map[string]string{".git/config": gitConfigWithOrigin},
			dir:   ".",
			want:  "https://github.com/acme/config.git",
		},
		{
			name:  "subdirectory",
			files: map[string]string{".git/config": gitConfigWithOrigin, "apps/web/x.yaml": ""},
			dir:   "apps/web",
			want:  "https://github.com/acme/config.git",
		},
		{
			name: "linked worktree",
			files: map[string]string{
				"main/.git/config":                 gitConfigWithOrigin,
				"main/.git/worktrees/wt/commondir": "../..\n",
				"wt/.git":                          "gitdir: ../main/.git/worktrees/wt\n",
			},
			dir:  "wt",
			want: "https://github.com/acme/config.git",
		},
		{
			name:  "no origin remote",
			files: map[string]string{".git/config": "[core]\n\tbare = false\n"},
			dir:   ".",
			want:  "",
		},
		{
			name:    "malformed config",
			files:   map[string]string{".git/config": "[remote \"origin\"\n\turl = x\n"},
			dir:     ".",
			wantErr: "parse git config",
		},
		{
			name:    "not a gitdir file",
			files:   map[string]string{".git": "hello\n"},
			dir:     ".",
			wantErr: "not a gitdir file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			testutil.WriteFiles(t, root, tt.files)
			got, err := originURL(filepath.Join(root, tt.dir))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("originURL = %q, want %q", got, tt.want)
			}
		})
	}
}
