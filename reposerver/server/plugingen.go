package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/reposerver"
	"github.com/tollgate-dev/tollgate/reposerver/scm"
)

// Bounds of a generator plugin's answer.
const (
	// pluginTimeout is a call's bound without the ConfigMap's
	// requestTimeout (Argo CD's default).
	pluginTimeout = 30 * time.Second
	// maxPluginAnswer bounds the answer's body.
	maxPluginAnswer = 16 << 20
)

// pluginCaller calls the generator plugins the controller read, by their
// ConfigMap's name, with Argo CD's protocol: POST
// <baseUrl>/api/v1/getparams.execute with a bearer token, the body
// {"applicationSetName": ..., "input": {"parameters": ...}}, the answer
// {"output": {"parameters": [...]}}.
type pluginCaller []reposerver.PluginAccess

// Params implements appset.PluginCaller.
func (pc pluginCaller) Params(ctx context.Context, field, set string, gen *v1alpha1.PluginGenerator) ([]map[string]any, error) {
	var plugin *reposerver.PluginAccess
	for i := range pc {
		if pc[i].ConfigMapName == gen.ConfigMapRef.Name {
			plugin = &pc[i]
		}
	}
	if plugin == nil {
		return nil, fmt.Errorf("%s.configMapRef: the plugin of ConfigMap %q was not read by the controller (a configMapRef rendered from parameters is not read)", field, gen.ConfigMapRef.Name)
	}
	body, err := json.Marshal(map[string]any{"applicationSetName": set, "input": gen.Input})
	if err != nil {
		return nil, err
	}
	timeout := plugin.RequestTimeout
	if timeout <= 0 {
		timeout = pluginTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimSuffix(plugin.BaseURL, "/") + "/api/v1/getparams.execute"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("error initializing plugin client: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tollgate-applicationset")
	if plugin.Token != "" {
		req.Header.Set("Authorization", "Bearer "+plugin.Token)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("error listing params: POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxPluginAnswer+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("error listing params: POST %s: %w", url, err)
	case len(answer) > maxPluginAnswer:
		return nil, fmt.Errorf("error listing params: POST %s: the answer is larger than %d MiB", url, maxPluginAnswer>>20)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("error listing params: POST %s: %s%s", url, resp.Status, scm.Snippet(answer))
	}
	var out struct {
		Output struct {
			Parameters []map[string]any `json:"parameters"`
		} `json:"output"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return nil, fmt.Errorf("error listing params: POST %s: decode the answer: %w", url, err)
	}
	return out.Output.Parameters, nil
}
