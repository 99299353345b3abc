# Container image for tollgate (webhook and controller). Static binary on a
# distroless base; runs as non-root, matching config/manager's securityContext.
#   docker build -t ghcr.io/tollgate-dev/tollgate:v0.1.0 .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -tags nodev -ldflags "-s -w -X main.version=${VERSION}" -o /tollgate ./cmd/tollgate

FROM gcr.io/distroless/static:nonroot
COPY --from=build /tollgate /tollgate
USER 65532:65532
ENTRYPOINT ["/tollgate"]
