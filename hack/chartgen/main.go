// Command chartgen writes tollgate's Helm chart (config/helm/tollgate) from
// the kustomize manifests: the objects config/default builds, and those of
// config/ui behind ui.enabled, with the fields the chart's values set
// replaced by template expressions and their defaults read from the same
// objects. So the chart and config/default are one set of manifests;
// `make chart` runs it, and its test checks that the committed chart is
// what it writes and renders, with the default values, the objects
// config/default builds.
//
//	go run ./hack/chartgen [-config DIR] [-out DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	config := flag.String("config", "config", "the kustomize manifests' `DIR`")
	out := flag.String("out", filepath.Join("config", "helm", "tollgate"), "the chart's `DIR`")
	flag.Parse()
	files, err := generate(*config)
	if err == nil {
		err = write(*out, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartgen:", err)
		os.Exit(1)
	}
}

// write replaces the generated parts of the chart in dir (Chart.yaml,
// values.yaml, templates/, crds/) with files.
func write(dir string, files map[string][]byte) error {
	for _, sub := range []string{"templates", "crds"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
