# The sandbox and the conform CLI in one small image.
#   docker build -t svc-kit .
#   docker run --rm -p 8080:8080 svc-kit
#   docker run --rm -e SVC_API_KEY --entrypoint conform svc-kit --base-url https://…
FROM golang:1.24 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/sandbox ./cmd/sandbox \
 && CGO_ENABLED=0 go build -trimpath -o /out/conform ./cmd/conform

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sandbox /out/conform /usr/local/bin/
EXPOSE 8080
# Inside a container the sandbox must listen on every interface to be reached.
ENTRYPOINT ["sandbox", "-addr", "0.0.0.0:8080"]
