package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tollgate-dev/tollgate/engine/health"
	"github.com/tollgate-dev/tollgate/reposerver/render"
)

// Output formats of `tollgate health`.
const (
	healthFormatText = "text"
	healthFormatJSON = "json"
)

// healthStdin is the FILE argument that reads standard input.
const healthStdin = "-"

// healthBuiltinLibrary is --test's name for the library built into the
// binary.
const healthBuiltinLibrary = "builtin"

type healthOptions struct {
	Output string
	Files  []string
	// Customizations are directories of Lua health checks in Argo CD's
	// layout, searched before the built-in ones.
	Customizations []string
	// TestDir, when set, runs the health_test.yaml cases of that directory
	// instead of judging files.
	TestDir string
}

// healthEntry is one object's health in the JSON output.
type healthEntry struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

func newHealthCmd() *cobra.Command {
	o := healthOptions{}
	cmd := &cobra.Command{
		Use:   "health [-o json] FILE...",
		Short: "Report the health of Kubernetes objects as Argo CD would judge it",
		Long: `Report the health of the Kubernetes objects in FILE (YAML or JSON, several
documents and List objects allowed; "-" reads standard input), with the
rules the sync engine and Argo CD use: Healthy, Progressing, Degraded,
Suspended, Missing or Unknown, and a message.

Objects are judged from their status, so feed it live objects, for example
kubectl get deploy,pods -o yaml | tollgate health -. Custom resources are
judged by Lua health checks as in Argo CD: those in --customizations
directories (Argo CD's resource_customizations layout), then tollgate's own
library (Argo Rollouts, cert-manager, external-secrets, sealed-secrets,
Flux, KEDA, Crossplane, PodDisruptionBudget...). --test DIR runs a
directory's health_test.yaml cases, so Argo CD's own scripts can be checked
unchanged; --test builtin runs those of the library built into this binary
(a directory named builtin is ./builtin).

Exit status: 0 whatever the health (the command reports), 2 on usage or
input errors (an unreadable file, or an object whose fields have the wrong
type; the other objects are still reported).`,
		Example: `  tollgate health deployment.yaml
  kubectl get all -n shop -o yaml | tollgate health -o json -
  kubectl get rollouts -A -o yaml | tollgate health --customizations ./resource_customizations -
  tollgate health --test ./resource_customizations
  tollgate health --test builtin`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.TestDir != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.TestDir != "" {
				return runHealthTests(cmd, o.TestDir)
			}
			o.Files = args
			return runHealth(cmd, o)
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", healthFormatText, "output format: text or json")
	cmd.Flags().StringArrayVar(&o.Customizations, "customizations", nil, "`DIR` of Lua health checks in Argo CD's resource_customizations layout (<group>/<kind>/health.lua), searched before the built-in ones (repeatable)")
	cmd.Flags().StringVar(&o.TestDir, "test", "", "run the health_test.yaml cases of `DIR` (Argo CD's resource_customizations layout; \"builtin\": the library built into this binary) and report each; exit 1 when one fails")
	return cmd
}

// runHealth decodes every file, then reports every object.
func runHealth(cmd *cobra.Command, o healthOptions) error {
	if o.Output != healthFormatText && o.Output != healthFormatJSON {
		return usageError(fmt.Errorf("invalid --output %q: valid formats are text, json", o.Output))
	}
	checker, err := health.NewChecker(o.Customizations...)
	if err != nil {
		return usageError(fmt.Errorf("--customizations: %w", err))
	}
	var docs []render.Document
	stdinUsed := false
	for _, f := range o.Files {
		if f == healthStdin {
			if stdinUsed {
				return usageError(errors.New(`"-" (standard input) given twice`))
			}
			stdinUsed = true
		}
		d, notes, err := decodeHealthFile(cmd.InOrStdin(), f)
		if err != nil {
			return usageError(err)
		}
		for _, n := range notes {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: %s:%d: %s\n", n.File, n.Line, n.Message)
		}
		docs = append(docs, d...)
	}
	entries := make([]healthEntry, 0, len(docs))
	var errs []error
	for _, d := range docs {
		obj := &unstructured.Unstructured{Object: d.Object}
		res, err := checker.Assess(obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", docLocation(d), err))
		}
		entries = append(entries, healthEntry{
			Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Status: string(res.Status), Message: res.Message,
		})
	}
	if err := writeHealth(cmd.OutOrStdout(), o.Output, entries); err != nil {
		return err
	}
	if len(errs) > 0 {
		return usageError(errors.Join(errs...))
	}
	return nil
}

// runHealthTests runs the health_test.yaml cases of dir and prints one line
// per case and a summary; a failed case exits 1.
func runHealthTests(cmd *cobra.Command, dir string) error {
	fsys := health.Builtin()
	if dir != healthBuiltinLibrary {
		fi, err := os.Stat(dir)
		if err != nil {
			return usageError(fmt.Errorf("--test: %w", err))
		}
		if !fi.IsDir() {
			return usageError(fmt.Errorf("--test %s: not a directory", dir))
		}
		fsys = os.DirFS(dir)
	}
	results, err := health.TestScripts(fsys)
	if err != nil {
		return usageError(err)
	}
	if len(results) == 0 {
		return usageError(fmt.Errorf("--test %s: no health_test.yaml found", dir))
	}
	out := cmd.OutOrStdout()
	failed := 0
	for _, r := range results {
		if r.Passed() {
			fmt.Fprintf(out, "ok    %s  %s  %s\n", r.Script, r.Input, r.Got.Status)
			continue
		}
		failed++
		fmt.Fprintf(out, "FAIL  %s  %s: %v\n", r.Script, r.Input, r.Err)
	}
	fmt.Fprintf(out, "%d cases, %d failed\n", len(results), failed)
	if failed > 0 {
		return &exitError{code: exitDenied, err: fmt.Errorf("%d of %d health check cases failed", failed, len(results))}
	}
	return nil
}

// decodeHealthFile decodes one FILE argument, naming documents after the
// argument as given.
func decodeHealthFile(stdin io.Reader, name string) ([]render.Document, []render.Note, error) {
	lim := render.DefaultLimits()
	if name == healthStdin {
		data, err := io.ReadAll(io.LimitReader(stdin, lim.MaxFileBytes+1))
		if err != nil {
			return nil, nil, fmt.Errorf("read standard input: %w", err)
		}
		// Decode enforces the size limit and reports it.
		return render.Decode("<stdin>", data, lim)
	}
	docs, notes, err := render.DecodeFile(filepath.Dir(name), filepath.Base(name), lim)
	if err != nil {
		var de *render.DecodeError
		if errors.As(err, &de) {
			de.File = name
			return nil, nil, de
		}
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range docs {
		docs[i].File = name
	}
	for i := range notes {
		notes[i].File = name
	}
	return docs, notes, nil
}

// docLocation names a document as file: document N (line L).
func docLocation(d render.Document) string {
	if d.Line > 0 {
		return fmt.Sprintf("%s: document %d (line %d)", d.File, d.Index+1, d.Line)
	}
	return fmt.Sprintf("%s: document %d", d.File, d.Index+1)
}

// writeHealth prints entries as text lines or a JSON array.
func writeHealth(w io.Writer, format string, entries []healthEntry) error {
	if format == healthFormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(entries); err != nil {
			return fmt.Errorf("write health report: %w", err)
		}
		return nil
	}
	for _, e := range entries {
		ref := e.Kind + "/" + e.Name
		if e.Namespace != "" {
			ref = e.Kind + "/" + e.Namespace + "/" + e.Name
		}
		line := ref + ": " + e.Status
		if e.Message != "" {
			line += " " + strings.Join(strings.Fields(e.Message), " ")
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return fmt.Errorf("write health report: %w", err)
		}
	}
	return nil
}
