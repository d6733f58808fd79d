# The sandbox and the conform CLI in one small image.
#   docker build -t svc-kit --build-arg REVISION="$(git rev-parse HEAD)" .
#   docker run --rm -p 8080:8080 svc-kit
#   docker run --rm -e SVC_API_KEY --entrypoint conform svc-kit --base-url https://…
#
# Both base images are pinned by digest, so that rebuilding an old commit
# gives the same image. The digests come from public Dockerfiles that pin the
# same tags (named below); they were not pulled where this file was written,
# which has no registry access, so a first `docker build` is what checks them.
# To refresh one: docker buildx imagetools inspect <image>:<tag>
#
# golang:1.26.4 (Alpine; the build is static, CGO_ENABLED=0), digest as
# pinned in a public Dockerfile that builds the same way.
# Its Go version must be the `go` line of go.mod: .ci/run fails otherwise.
FROM golang:1.26.4-alpine@sha256:3ad57304ad93bbec8548a0437ad9e06a455660655d9af011d58b993f6f615648 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# .git stays out of the build context (.dockerignore), so the toolchain cannot
# record the revision itself: pass it as a build argument.
ARG REVISION=
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-X github.com/testcampaign/kit/internal/version.revision=${REVISION}" \
      -o /out/ ./cmd/sandbox ./cmd/conform

# gcr.io/distroless/static-debian12:nonroot (no shell, runs as uid 65532),
# digest as pinned in kilo666mj/taskboard's Dockerfile and in other public
# Dockerfiles, one of which dates it 2026-08-26.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/sandbox /out/conform /usr/local/bin/
EXPOSE 8080
# No shell or curl in the image: the binary asks its own /healthz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["sandbox", "healthcheck", "-addr", "127.0.0.1:8080"]
# Inside a container the sandbox must listen on every interface to be reached.
ENTRYPOINT ["sandbox", "-addr", "0.0.0.0:8080"]
