# tollgate: policy guard for Argo CD-style GitOps.
# `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
export GOTOOLCHAIN := local
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GO_TEST_FLAGS ?=
# Integration tests start one control plane per package; keep packages from
# starving each other on small machines.
GO_TEST_P ?= 2

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/tollgate (static, CGO_ENABLED=0).
	go build -trimpath -ldflags "$(LDFLAGS)" -o bin/tollgate ./cmd/tollgate

.PHONY: tools
tools: ## Build etcd, kube-apiserver and kube-controller-manager from source into a cache, link into bin/k8s (first time 10-16 min).
	bash hack/build-tools.sh

.PHONY: browser
browser: ## Install Debian's chromium for the web UI's browser tests (once; needs root or sudo).
	bash hack/install-chromium.sh

.PHONY: test
test: tools browser ## Unit, Rego, CLI, browser and integration tests against a real kube-apiserver + etcd.
	go test -p $(GO_TEST_P) -count=1 -timeout 30m $(GO_TEST_FLAGS) ./...
	cd test/bench/matchconditions && go test -count=1 $(GO_TEST_FLAGS) .

.PHONY: fuzz
fuzz: ## Run every Fuzz target for FUZZTIME (default 5s) beyond its committed seed corpus.
	bash hack/fuzz-smoke.sh

.PHONY: lint
lint: ## go vet and gofmt.
	go vet ./...
	go vet -tags nodev ./cmd/tollgate
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: generate
generate: ## Regenerate deepcopy code and CRDs (controller-gen from the module proxy).
	bash hack/generate.sh

.PHONY: chart
chart: ## Write the Helm chart config/helm/tollgate from the kustomize manifests of config/ (its test checks it is current).
	go run ./hack/chartgen

.PHONY: demo
demo: tools build ## The whole product on an embedded control plane: tollgate dev --tour (first run builds the control plane: 10-16 min).
	bin/tollgate dev --tour

.PHONY: demo-cli
demo-cli: build ## tollgate test over the example config repo and each bad change, then tollgate diff of one (seconds, no control plane).
	bash hack/demo.sh

.PHONY: bench
bench: build ## tollgate test beside conftest on a 10,000-document corpus, Go benchmarks, tollgate diff of 200 Applications beside rendering them twice.
	bash hack/bench.sh

.PHONY: bench-webhook
bench-webhook: ## Load benchmark of the admission webhook over HTTPS on loopback.
	go run ./test/bench/webhookload

.PHONY: bench-admission
bench-admission: tools ## What the webhook adds to writes through a real kube-apiserver, beside a no-op webhook: the same load with tollgate, the no-op and none registered.
	go run ./test/bench/admission

.PHONY: bench-matchconditions
bench-matchconditions: ## What the tracked webhook's match condition costs the API server per write (its own CEL evaluator), beside the same test written as four conditions.
	cd test/bench/matchconditions && go test -run '^$$' -bench . -benchmem -count 3

.PHONY: bench-audit
bench-audit: tools ## tollgate audit over 10,000 stored objects beside a plain list of them (kubectl get): time and peak RSS.
	go build -trimpath -tags nodev -ldflags "$(LDFLAGS)" -o bin/tollgate-nodev ./cmd/tollgate
	go run ./test/bench/audit -tollgate bin/tollgate-nodev

.PHONY: bench-engine
bench-engine: tools ## Sync 500 objects beside kubectl apply --server-side; idle resync cost of 200 Applications (the image's binary, -tags nodev, as the controller); repo-server latency and renders/s with 1 and 2 replicas.
	go build -trimpath -tags nodev -ldflags "$(LDFLAGS)" -o bin/tollgate-nodev ./cmd/tollgate
	go run ./test/bench/engine -tollgate bin/tollgate-nodev
	go test ./reposerver/server -run '^$$' -bench '^Benchmark(Generate|Replicas)$$' -benchtime 30x -count 3

.PHONY: bench-scale
bench-scale: tools ## First sync of 200 then 1,000 Applications of healthy-at-once objects beside kubectl; then 2,000 Applications of 10 objects with 1 then 2 controller replicas (first full sync beside kubectl, idle cost per replica), then 3,000 with 2 replicas if the idle goal holds (hours on 2 cores).
	go build -trimpath -tags nodev -ldflags "$(LDFLAGS)" -o bin/tollgate-nodev ./cmd/tollgate
	go run ./test/bench/engine -tollgate bin/tollgate-nodev -part firstsync -counts 200,1000 -app-objects 10 -resync 60s -timeout 90m
	go run ./test/bench/engine -tollgate bin/tollgate-nodev -part scale -apps 2000 -app-objects 10 -resync 60s -cycles 2 -step 1000 -max-apps 3000 -timeout 300m

.PHONY: clean
clean: ## Remove bin/ (the tools cache outside the checkout is kept).
	rm -rf bin
