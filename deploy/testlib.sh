# shellcheck shell=bash
# Helpers for the deploy/ checks: sourced, not run. Everything they start
# listens on 127.0.0.1 only and is bounded in time.

# say prints a progress line on stderr.
say() { echo "$(basename "$0"): $*" >&2; }

# A command that fails under set -e says where, instead of ending silently.
trap 'say "FAIL: line $LINENO: $BASH_COMMAND"' ERR

# die reports a failure and exits; the caller's trap cleans up.
die() { say "FAIL: $*"; exit 1; }

# need_package installs a Debian package when its command is missing (CI
# runs as root on a fresh Debian machine).
need_package() {
  local cmd=$1 pkg=$2
  command -v "$cmd" >/dev/null 2>&1 && return 0
  say "installing $pkg (for $cmd)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg"; } >/dev/null; then
    die "could not install $pkg"
  fi
  command -v "$cmd" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  command -v "$cmd" >/dev/null 2>&1 || die "$pkg installed no $cmd"
}

# free_port prints a 127.0.0.1 port that nothing listens on now.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

# wait_http waits up to $2 seconds (default 10) for URL $1 to answer 200.
wait_http() {
  local url=$1 deadline=$((SECONDS + ${2:-10}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# stop_pids sends SIGTERM to each process id given, then SIGKILL to any
# still there after 10 seconds.
stop_pids() {
  local pid
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && return 0
    sleep 0.2
  done
  for pid in "$@"; do kill -KILL "$pid" 2>/dev/null || true; done
}

# scratch makes the directory $tmp and the list pids of processes started,
# and on exit, however the script ends, stops those processes and removes
# the directory.
scratch() {
  tmp=$(mktemp -d)
  pids=()
  trap 'cleanup_scratch' EXIT
}

cleanup_scratch() {
  [ ${#pids[@]} -eq 0 ] || stop_pids "${pids[@]}"
  rm -rf "$tmp"
}
