#!/usr/bin/env bash
# Runs a fleet on loopback and checks that it behaves as one sandbox:
#   - installs nginx (nginx-light) from Debian's packages if it is missing;
#   - starts as many sandbox replicas as deploy/nginx.conf names, each on a
#     free 127.0.0.1 port, and nginx with that very file, changing only its
#     `listen` port and its `server` lines;
#   - runs conform --profile sandbox through nginx, which must pass;
#   - sends requests with several more keys through nginx (with the scheme
#     word in either case), then asks every
#     replica directly for each key's request log (GET /_sandbox/requests):
#     all of a key's requests must be on exactly one replica, and the keys
#     must spread over more than one;
#   - registers a webhook with one key on two replicas directly: both must
#     give it the same secret, since every replica has the same SANDBOX_SECRET;
#   - sends a request from 127.0.0.2 with a forged X-Forwarded-For: the
#     replica (run with -trust-forwarded-for, as compose.yaml does) must log
#     the client as 127.0.0.2, the address nginx appended, not the forged one;
#   - plans, through nginx, faults whose headers nginx would act on
#     (X-Accel-Redirect, X-Accel-Limit-Rate): each must be refused, and
#     nginx must run with those headers ignored;
#   - restarts one replica: its key must find a freshly seeded account there;
#   - stops everything it started, also on failure.
# Every request goes to 127.0.0.1 and every step is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
. deploy/testlib.sh

need_package curl curl
need_package nginx nginx-light

scratch

say "building sandbox and conform"
go build -o "$tmp/bin/" ./cmd/sandbox ./cmd/conform

conf=deploy/nginx.conf
replicas=$(grep -cE '^[[:space:]]*server[[:space:]]+sandbox-[0-9]+:8080[[:space:];]' "$conf") || true
[ "$replicas" -ge 2 ] || die "$conf names $replicas replicas; a fleet needs at least 2"

# One server secret for the whole fleet, so that the replicas derive the same
# webhook secrets and Webhook-Ids; from the environment, which ps does not show.
SANDBOX_SECRET=$(head -c 24 /dev/urandom | base64)
export SANDBOX_SECRET

# Start the replicas on ports they pick themselves, and read the port back
# from each one's start-up log line.
ports=()
for i in $(seq "$replicas"); do
  "$tmp/bin/sandbox" -addr 127.0.0.1:0 -trust-forwarded-for 2>"$tmp/sandbox-$i.log" &
  pids+=($!)
done
for i in $(seq "$replicas"); do
  port=
  for _ in $(seq 50); do
    port=$(sed -n 's/.*url=http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/sandbox-$i.log" | head -n1)
    [ -n "$port" ] && break
    sleep 0.2
  done
  [ -n "$port" ] || { cat "$tmp/sandbox-$i.log" >&2; die "replica $i did not start"; }
  ports+=("$port")
done
say "replicas on 127.0.0.1 ports ${ports[*]}"

# nginx with the shipped configuration, on loopback.
mkdir -p "$tmp/nginx"
front=$(free_port)
[ -n "$front" ] || exit 1
# Each replica's line keeps its parameters, with its name and port replaced.
awk -v ports="${ports[*]}" -v listen="127.0.0.1:$front" '
  BEGIN { split(ports, port, " ") }
  /^[[:space:]]*server[[:space:]]+sandbox-[0-9]+:8080[[:space:];]/ { sub(/sandbox-[0-9]+:8080/, "127.0.0.1:" port[++i]) }
  /^[[:space:]]*listen[[:space:]]+8080;/ { sub(/8080/, listen) }
  { print }
' "$conf" >"$tmp/nginx/nginx.conf"
grep -q "listen $(printf '%s' "127.0.0.1:$front");" "$tmp/nginx/nginx.conf" || die "$conf has no 'listen 8080;' line to move to loopback"
nginx_args=(-p "$tmp/nginx/" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" -g "daemon off; pid $tmp/nginx/nginx.pid;")
nginx -t -q "${nginx_args[@]}" || { cat "$tmp/nginx/error.log" >&2; die "nginx refused $conf"; }
nginx "${nginx_args[@]}" >"$tmp/nginx/access.log" 2>&1 &
pids+=($!)
base=http://127.0.0.1:$front
wait_http "$base/healthz" 10 || { cat "$tmp/nginx/error.log" >&2; die "nginx did not answer on $base"; }
say "nginx on $base"

conform_key=svc_test_fleet_conform
say "conform --profile sandbox through nginx"
# A replica's planned reset, close or truncate reaches a client behind
# nginx as nginx's 502 or a closed connection, as behind any proxy, and a
# fault's side effects on the proxy's connections can cut another
# scenario's request: the planned faults (@faults, @direct) and the
# explorer, which plans them at random, are checked against a replica
# directly, by go test; through nginx the run checks everything else.
SVC_API_KEY=$conform_key timeout 180 "$tmp/bin/conform" --base-url "$base" --profile sandbox --format none --tags '~@direct && ~@faults' --explore -1s ||
  { tail -n 20 "$tmp/nginx/error.log" >&2; die "conform did not pass through nginx"; }

# Each extra key sends the same three API requests through nginx, the last
# with the scheme word in lower case, which the sandbox takes as the same key.
keys=()
for n in $(seq -w 1 12); do keys+=("svc_test_fleet_key_$n"); done
per_key=3
for key in "${keys[@]}"; do
  auth="Authorization: Bearer $key"
  curl -fsS -o /dev/null --max-time 10 -H "$auth" "$base/v1/campaigns"
  curl -fsS -o /dev/null --max-time 10 -H "$auth" -H 'Content-Type: application/json' \
    -d '{"name":"Fleet","platform":"web","testersRequired":2,"rewardPerBug":5}' "$base/v1/campaigns"
  curl -fsS -o /dev/null --max-time 10 -H "Authorization: bearer $key" "$base/v1/bugs?limit=5"
done

# requests_on prints how many API requests replica port $1 logged for key $2.
requests_on() {
  curl -fsS --max-time 10 -H "Authorization: Bearer $2" "http://127.0.0.1:$1/_sandbox/requests" |
    { grep -o '"method":' || true; } | wc -l
}
declare -A used=() holder=()
for key in "$conform_key" "${keys[@]}"; do
  shown="${key:0:9}…${key: -4}"
  holders=() counts=()
  for port in "${ports[@]}"; do
    count=$(requests_on "$port" "$key")
    if [ "$count" -gt 0 ]; then
      holders+=("$port")
      counts+=("$count")
    fi
  done
  [ ${#holders[@]} -eq 1 ] || die "key $shown has requests on ${#holders[@]} replicas (${holders[*]:-none}), not on exactly one"
  if [ "$key" != "$conform_key" ] && [ "${counts[0]}" -ne "$per_key" ]; then
    die "key $shown sent $per_key requests, its replica logged ${counts[0]}"
  fi
  used[${holders[0]}]=1
  holder[$key]=${holders[0]}
  say "key $shown: all ${counts[0]} requests on the replica at port ${holders[0]}"
done
[ ${#used[@]} -gt 1 ] || die "all $((${#keys[@]} + 1)) keys went to one replica: nginx is not spreading them"
say "keys spread over ${#used[@]} of $replicas replicas"

# webhook_secret registers a webhook for key $2 on the replica at port $1 and
# prints its secret.
webhook_secret() {
  curl -fsS --max-time 10 -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
    -d '{"url":"http://127.0.0.1:9/hook","events":["*"]}' "http://127.0.0.1:$1/v1/webhooks" |
    sed -n 's/.*"secret":"\([^"]*\)".*/\1/p'
}
first=$(webhook_secret "${ports[0]}" svc_test_fleet_secret)
second=$(webhook_secret "${ports[1]}" svc_test_fleet_secret)
[ -n "$first" ] && [ "$first" = "$second" ] || die "one key's first webhook got different secrets on two replicas"
say "replicas agree on webhook secrets"
# Each client counts by the address nginx saw, whatever it claims itself.
curl -fsS -o /dev/null --max-time 10 --interface 127.0.0.2 -H "X-Forwarded-For: 198.51.100.7" "$base/healthz"
# The sandbox writes its log out every 100 ms, so the line may lag the answer.
line=
for _ in $(seq 40); do
  line=$(grep -h 'path=/healthz' "$tmp"/sandbox-*.log | grep 'client=127.0.0.2' || true)
  [ -n "$line" ] && break
  sleep 0.05
done
[ -n "$line" ] || die "no replica logged the request from 127.0.0.2 as that client within 2 s"
if grep -h 'client=198.51.100.7' "$tmp"/sandbox-*.log >/dev/null; then
  die "a replica counted a client by the X-Forwarded-For it forged"
fi
say "replicas count each client by the address nginx appends"

# No answer may steer nginx: a fault's X-Accel-* headers are refused, and
# nginx ignores them as well.
for header in X-Accel-Redirect x-accel-limit-rate; do
  status=$(curl -sS -o "$tmp/accel.json" -w '%{http_code}' --max-time 10 -H "Authorization: Bearer svc_test_fleet_accel" \
    -H 'Content-Type: application/json' -d "{\"status\":500,\"headers\":{\"$header\":\"/v1/testers\"}}" "$base/_sandbox/faults")
  [ "$status" = 400 ] && grep -q VALIDATION_ERROR "$tmp/accel.json" || die "a fault setting $header got $status through nginx, want 400 VALIDATION_ERROR"
done
ignored=$(nginx -T -q "${nginx_args[@]}" 2>/dev/null | grep -E '^[[:space:]]*proxy_ignore_headers' || true)
for header in X-Accel-Redirect X-Accel-Limit-Rate X-Accel-Buffering X-Accel-Expires X-Accel-Charset; do
  grep -q "$header" <<<"$ignored" || die "nginx does not ignore $header from the replicas"
done
say "faults cannot set headers nginx acts on, and nginx ignores them"

# A replica that restarts comes back with freshly seeded accounts, and nginx
# sends the same keys to it again.
key=${keys[0]}
port=${holder[$key]}
has_fleet_campaign() {
  curl -fsS --max-time 10 -H "Authorization: Bearer $key" "$base/v1/campaigns?limit=100" | grep -q '"name":"Fleet"'
}
has_fleet_campaign || die "the campaign key ${key:0:9}…${key: -4} created is not listed"
for i in "${!ports[@]}"; do
  [ "${ports[$i]}" = "$port" ] || continue
  stop_pids "${pids[$i]}"
  "$tmp/bin/sandbox" -addr "127.0.0.1:$port" -trust-forwarded-for 2>>"$tmp/sandbox-$((i + 1)).log" &
  pids[i]=$!
done
wait_http "http://127.0.0.1:$port/healthz" 10 || die "the replica at port $port did not restart"
if has_fleet_campaign; then
  die "after its replica restarted, key ${key:0:9}…${key: -4} still sees its campaign"
fi
for p in "${ports[@]}"; do
  want=0
  [ "$p" = "$port" ] && want=1
  got=$(requests_on "$p" "$key")
  [ "$got" -eq "$want" ] || die "after the restart, the replica at port $p logged $got requests of the key, want $want"
done
say "restarting the replica at port $port reseeded its key's account, and the key still reaches it"
say "ok"
