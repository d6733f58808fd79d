#!/usr/bin/env bash
# Replays the Dockerfile's build where no Docker engine runs, so that the
# image's build and start cannot rot unnoticed:
#   - both base images are pinned by digest, and the builder's Go version is
#     the `go` line of go.mod (and the CI image in docs/conform.md follows it);
#   - the build context is made from .dockerignore exactly as Docker would
#     (only `*` then `!path` lines are understood, and anything else fails);
#   - the build stage's ARGs and RUN commands run as written, in that context,
#     with the machine's GOFLAGS cleared as in the golang image; the one change
#     is that /out becomes a temporary directory;
#   - the ENTRYPOINT starts the built sandbox with its own arguments, except
#     that an address on the EXPOSEd port becomes 127.0.0.1 and a free port
#     (0.0.0.0 is for containers; this check stays on loopback);
#   - /healthz must answer, the HEALTHCHECK command must exit 0, the built
#     conform must pass --profile sandbox against it, and both binaries must
#     name the revision passed as a build argument.
# What it cannot check: that the digests resolve, and the golang image's own
# Go (the local toolchain builds instead, with the same flags).
set -euo pipefail
cd "$(dirname "$0")/.."
. deploy/testlib.sh

need_package curl curl

scratch

# The Dockerfile as logical lines: comments dropped, continuations joined.
logical_lines() {
  sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$1" | sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta'
}

# json_array prints the elements of an exec-form ["a", "b"] one per line.
json_array() {
  local s=$1
  [[ $s =~ ^\[(.*)\]$ ]] || die "not an exec-form array: $1"
  s=${BASH_REMATCH[1]}
  while [[ $s =~ ^[[:space:]]*\"([^\"\\]*)\"[[:space:]]*(,(.*))?$ ]]; do
    echo "${BASH_REMATCH[1]}"
    [ -n "${BASH_REMATCH[2]}" ] || return 0
    s=${BASH_REMATCH[3]}
  done
  die "cannot read the array $1"
}

stage=0 froms=() build_args=() runs=() final_copies=() workdir='' entrypoint='' healthcheck='' expose=''
while IFS= read -r line; do
  instr=${line%%[[:space:]]*}
  rest=${line#"$instr"}
  rest=${rest#"${rest%%[![:space:]]*}"}
  case ${instr^^} in
    FROM) stage=$((stage + 1)); froms+=("$rest") ;;
    WORKDIR) [ "$stage" = 1 ] && workdir=$rest ;;
    ARG) [ "$stage" = 1 ] && build_args+=("$rest") ;;
    RUN) [ "$stage" = 1 ] && runs+=("$rest") ;;
    COPY) [ "$stage" = 2 ] && final_copies+=("$rest") ;;
    EXPOSE) expose=$rest ;;
    HEALTHCHECK) healthcheck=$rest ;;
    ENTRYPOINT) entrypoint=$rest ;;
  esac
done < <(logical_lines Dockerfile)

[ ${#froms[@]} -eq 2 ] || die "expected a build stage and a final stage, found ${#froms[@]} FROM lines"
for from in "${froms[@]}"; do
  [[ $from =~ @sha256:[0-9a-f]{64}([[:space:]]|$) ]] || die "base image not pinned by digest: FROM $from"
done

# The builder's Go must be go.mod's: same minor version, and no older patch.
gomod=$(awk '$1 == "go" { print $2 }' go.mod)
[[ ${froms[0]} =~ ^golang:([0-9]+\.[0-9]+(\.[0-9]+)?)[-@] ]] || die "the build stage is not a golang:<version> image: ${froms[0]}"
image_go=${BASH_REMATCH[1]}
if [ "$(cut -d. -f1,2 <<<"$image_go")" != "$(cut -d. -f1,2 <<<"$gomod")" ] ||
  [ "$(printf '%s\n' "$gomod" "$image_go" | sort -V | head -n1)" != "$gomod" ]; then
  die "Dockerfile builds with golang:$image_go but go.mod says go $gomod: move them together"
fi
docs_go=$(sed -n 's/^[[:space:]]*image: golang:\([0-9.]*\).*/\1/p' docs/conform.md | head -n1)
[ "$docs_go" = "$(cut -d. -f1,2 <<<"$gomod")" ] || die "docs/conform.md's CI image is golang:$docs_go but go.mod says go $gomod"
say "base images pinned; builder Go $image_go matches go.mod's go $gomod"

# The build context, from .dockerignore.
ctx=$tmp/src
mkdir -p "$ctx"
seen_star=''
while IFS= read -r pattern; do
  if [ -z "$seen_star" ]; then
    [ "$pattern" = "*" ] || die ".dockerignore must start with '*' for this check to read it"
    seen_star=yes
    continue
  fi
  [[ $pattern == '!'* ]] || die ".dockerignore line '$pattern' is neither '*' nor '!path'"
  path=${pattern#!}
  [ -e "$path" ] || die ".dockerignore lets in $path, which does not exist"
  mkdir -p "$ctx/$(dirname "$path")"
  cp -a "$path" "$ctx/$path"
done < <(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' .dockerignore)
[ "$workdir" = /src ] || die "the check assumes WORKDIR /src in the build stage, found '$workdir'"

# The build stage's ARGs, with the values a release build passes.
declare -A arg_values=([REVISION]=$(git rev-parse HEAD))
build_env=(GOFLAGS=)
for arg in "${build_args[@]}"; do
  name=${arg%%=*}
  build_env+=("$name=${arg_values[$name]-${arg#*=}}")
done

out=$tmp/out
for cmd in "${runs[@]}"; do
  cmd=${cmd//\/out\//$out\/}
  say "RUN $cmd"
  (cd "$ctx" && env "${build_env[@]}" sh -ec "$cmd") || die "the build stage's RUN failed: $cmd"
done

# The final stage copies the binaries onto the image's PATH.
for copy in "${final_copies[@]}"; do
  read -ra words <<<"$copy"
  [ "${words[0]}" = "--from=build" ] || die "unexpected COPY in the final stage: $copy"
  [ "${words[-1]}" = /usr/local/bin/ ] || die "the final stage must copy to /usr/local/bin/: $copy"
  for src in "${words[@]:1:${#words[@]}-2}"; do
    [ -x "${src/#\/out\//$out/}" ] || die "the build stage made no $src"
  done
done
export PATH="$out:$PATH"

# Start the ENTRYPOINT on loopback.
[[ $expose =~ ^([0-9]+)$ ]] || die "expected one EXPOSEd port, found '$expose'"
port=$(free_port)
[ -n "$port" ] || exit 1
on_loopback() {
  local arg
  for arg in "$@"; do
    if [[ $arg == *":$expose" ]]; then echo "127.0.0.1:$port"; else echo "$arg"; fi
  done
}
mapfile -t ep < <(json_array "$entrypoint")
mapfile -t ep < <(on_loopback "${ep[@]}")
[[ $healthcheck =~ CMD[[:space:]]+(\[.*\])$ ]] || die "HEALTHCHECK must use an exec-form CMD: $healthcheck"
mapfile -t hc < <(json_array "${BASH_REMATCH[1]}")
mapfile -t hc < <(on_loopback "${hc[@]}")

say "ENTRYPOINT ${ep[*]}"
"${ep[@]}" 2>"$tmp/sandbox.log" &
sandbox_pid=$!
pids+=("$sandbox_pid")
wait_http "http://127.0.0.1:$port/healthz" 10 || { cat "$tmp/sandbox.log" >&2; die "/healthz did not answer within 10s"; }
say "HEALTHCHECK ${hc[*]}"
"${hc[@]}" || die "the HEALTHCHECK command exited $?"

for bin in sandbox conform; do
  v=$("$bin" --version) || die "$bin --version failed"
  say "$v"
  [[ $v == *"${arg_values[REVISION]}"* ]] || die "$bin --version does not name the revision ${arg_values[REVISION]}"
done
say "conform --profile sandbox against it"
SVC_API_KEY=svc_test_dockerfile_check timeout 120 conform --base-url "http://127.0.0.1:$port" --profile sandbox --format none ||
  die "the built conform did not pass against the built sandbox"

kill -TERM "$sandbox_pid"
wait "$sandbox_pid" || die "the sandbox exited $? on SIGTERM instead of shutting down cleanly"
pids=()
say "ok"
