#!/usr/bin/env bash
# A throwaway single-node Ceph cluster with an S3 gateway, for tests.
#
#   scripts/s3/radosgw.sh start  <dir> <port>   # prints S3_ENDPOINT=... lines on success
#   scripts/s3/radosgw.sh status <dir> <port>   # exit 0 when the gateway answers
#   scripts/s3/radosgw.sh stop   <dir> [port]   # kills the daemons, removes <dir>
#   scripts/s3/radosgw.sh gateway-stop  <dir>    # kills only radosgw (the S3 endpoint goes away, data stays)
#   scripts/s3/radosgw.sh gateway-start <dir>    # starts radosgw again on the recorded port (after gateway-stop)
#
# One monitor, one OSD on memstore (objects live in RAM), radosgw (beast) on 127.0.0.1:<port>.
# Every setting below that is not a plain default was found by a failure (each says which).
# Needs the Debian packages radosgw ceph-mon ceph-osd ceph-common.
# Environment: RGW_MON_PORT (default: a free port), RGW_START_TIMEOUT seconds (default 60),
# S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY (default: the fixed test pair below).
set -euo pipefail

ACCESS_KEY="${S3_ACCESS_KEY_ID:-insightexporttestkey}"
SECRET_KEY="${S3_SECRET_ACCESS_KEY:-insightexporttestsecret0000000000000000}"
RGW_USER="insight-export-test"
POOLS=(.rgw.root default.rgw.log default.rgw.control default.rgw.meta
  default.rgw.buckets.index default.rgw.buckets.data default.rgw.buckets.non-ec)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "radosgw.sh: $*" >&2; exit 1; }
now_ms() { date +%s%3N; }
T_START=$(now_ms)
trace() { if [[ -n "${RGW_TRACE:-}" ]]; then echo "radosgw.sh +$(( $(now_ms) - T_START ))ms $*" >&2; fi; }

usage() { die "usage: $0 start|stop|status|gateway-stop|gateway-start <dir> <port>"; }

[[ $# -ge 2 ]] || usage
CMD="$1"
DIR="$(realpath -m -- "$2")"
PORT="${3:-}"

free_port() {
  # Ask the kernel for an unused port on the loopback address.
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A process's command line with spaces between its arguments; empty once the process is gone.
cmdline_of() {
  { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null || true
}

s3_answers() {
  # Any HTTP status line from the gateway counts (anonymous ListBuckets: 200). Bash's /dev/tcp:
  # no curl needed.
  local line=''
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  # Tests: RGW_PROBE_DELAY seconds between connecting and writing (a reset arrives in between).
  if [[ -n "${RGW_PROBE_DELAY:-}" ]]; then sleep "$RGW_PROBE_DELAY"; fi
  # A gateway just killed can accept and then reset: the write must fail (EPIPE), not kill this
  # shell with SIGPIPE, so it is written from a subshell that ignores SIGPIPE.
  (
    trap '' PIPE
    printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  ) 2>/dev/null || {
    exec 3>&-
    return 1
  }
  IFS= read -r -t 2 line <&3 || true
  exec 3>&-
  [[ "$line" == HTTP/* ]]
}

kill_daemons() {
  local pidfile pid pids=()
  for pidfile in "$DIR"/run/*.pid; do
    [[ -f "$pidfile" ]] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    [[ -n "$pid" ]] && pids+=("$pid")
  done
  # Daemons started but not yet past writing their pid file are listed by start().
  if [[ -f "$DIR/pids" ]]; then
    while read -r pid; do [[ -n "$pid" ]] && pids+=("$pid"); done < "$DIR/pids"
  fi
  # Only processes whose command line names this cluster's ceph.conf: a pid may have been reused.
  local mine=()
  for pid in "${pids[@]}"; do
    if [[ "$(cmdline_of "$pid")" == *"$DIR/ceph.conf"* ]]; then mine+=("$pid"); fi
  done
  pids=("${mine[@]+"${mine[@]}"}")
  [[ ${#pids[@]} -gt 0 ]] || return 0
  # SIGKILL straight away: the data lives in RAM and is thrown away anyway, and on SIGTERM the
  # OSD waits 5 s for a monitor that may already be gone.
  kill -KILL "${pids[@]}" 2>/dev/null || true
  local i pid alive
  for i in $(seq 1 50); do
    alive=0
    for pid in "${pids[@]}"; do
      # A zombie (state Z) is dead for our purposes; its reaping is up to its parent.
      if [[ -e /proc/$pid ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null; then alive=1; fi
    done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  echo "radosgw.sh: some daemons of $DIR did not exit: ${pids[*]}" >&2
}

write_conf() {
  local fsid="$1" mon_port="$2"
  cat > "$DIR/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$mon_port]
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind msgr2 = true
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
; without these radosgw hangs at start (get_initial_auth_request returned -13)
ms cluster mode = crc secure
ms service mode = crc secure
ms client mode = crc secure
ms mon cluster mode = crc secure
ms mon service mode = crc secure
ms mon client mode = crc secure
keyring = $DIR/keyring
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
log file = $DIR/log/\$name.log
log to stderr = false
err to stderr = true
mon cluster log file = $DIR/log/cluster.log
crash dir = $DIR/crash
; one OSD, no replication
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
; without a short propose interval every map change waits ~1 s
paxos propose interval = 0.05
paxos min wait = 0.01
mon data avail warn = 1
mon data avail crit = 0

[client]
; a client that started before the OSD was up otherwise learns of it only at the next
; objecter tick (5 s)
objecter tick interval = 0.1

[mon]
mon data = $DIR/mon
mon initial members = a

[osd]
osd data = $DIR/osd
osd objectstore = memstore
memstore device bytes = 4294967296
osd op num shards = 2
osd op num threads per shard = 1

[client.rgw]
rgw data = $DIR/rgw
; without tcp_nodelay every small request takes ~48 ms
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw thread pool size = 64
rgw override bucket index max shards = 1
rgw dynamic resharding = false
rgw enable usage log = false
rgw enable lc threads = false
rgw enable quota threads = false
rgw run sync thread = false
rgw gc obj min wait = 60
rgw data log backing = omap
EOF
}

start() {
  [[ -n "$PORT" ]] || usage
  local b
  for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph-authtool ceph; do
    command -v "$b" >/dev/null || die "$b not found: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd ceph-common"
  done
  if s3_answers "$PORT"; then die "port $PORT already answers HTTP"; fi
  local t0; t0=$(now_ms)
  local timeout="${RGW_START_TIMEOUT:-60}"
  if [[ -d "$DIR" && -n "$(ls -A "$DIR")" && ! ( -f "$DIR/ceph.conf" && -f "$DIR/pids" ) ]]; then
    die "$DIR exists and is not a radosgw.sh cluster folder; not overwriting it"
  fi
  [[ -d "$DIR" ]] && DIR="$DIR" stop
  mkdir -p "$DIR"/{run,log,mon,osd,crash,rgw}
  : > "$DIR/pids"
  local fsid mon_port osd_uuid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  mon_port="${RGW_MON_PORT:-$(free_port)}"
  write_conf "$fsid" "$mon_port"
  echo "$PORT" > "$DIR/port"
  local CONF=(-c "$DIR/ceph.conf")

  trace "config written"
  # Monitor and OSD file systems (no monitor needed for either).
  ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$DIR/monmap" >/dev/null
  ceph-mon "${CONF[@]}" -i a --mkfs --monmap "$DIR/monmap" --keyring "$DIR/keyring" \
    2>"$DIR/log/mon-mkfs.err" || die "ceph-mon --mkfs failed: $(cat "$DIR/log/mon-mkfs.err")"
  ceph-osd "${CONF[@]}" --no-mon-config -i 0 --mkfs --osd-uuid "$osd_uuid" \
    >"$DIR/log/osd-mkfs.out" 2>&1 || die "ceph-osd --mkfs failed: $(cat "$DIR/log/osd-mkfs.out")"

  trace "mkfs done, starting ceph-mon"
  ceph-mon "${CONF[@]}" -i a -f </dev/null >>"$DIR/log/mon.out" 2>&1 &
  echo $! >> "$DIR/pids"

  # All monitor commands in one librados session (a `ceph` CLI start costs 0.2-0.5 s each).
  if ! /usr/bin/python3 "$HERE/mon-setup.py" "$DIR/ceph.conf" "$osd_uuid" 8 "${POOLS[@]}" \
      >"$DIR/log/mon-setup.out" 2>&1; then
    kill_daemons
    die "monitor set-up failed: $(tail -n 20 "$DIR/log/mon-setup.out")"
  fi

  trace "pools created, starting ceph-osd"
  ceph-osd "${CONF[@]}" -i 0 -f </dev/null >>"$DIR/log/osd.out" 2>&1 &
  echo $! >> "$DIR/pids"

  trace "starting radosgw"
  radosgw "${CONF[@]}" -n client.rgw -f </dev/null >>"$DIR/log/rgw.out" 2>&1 &
  echo $! >> "$DIR/pids"

  local deadline=$(( $(now_ms) + timeout * 1000 ))
  until s3_answers "$PORT"; do
    if [[ $(now_ms) -gt $deadline ]]; then
      kill_daemons
      die "radosgw did not answer on 127.0.0.1:$PORT within ${timeout}s; logs in $DIR/log: $(tail -n 5 "$DIR/log/client.rgw.log" 2>/dev/null)"
    fi
    local rgw_pid; rgw_pid=$(tail -n 1 "$DIR/pids")
    if ! kill -0 "$rgw_pid" 2>/dev/null; then
      local why; why=$(tail -n 20 "$DIR/log/rgw.out" "$DIR/log/client.rgw.log" 2>/dev/null || true)
      kill_daemons
      die "radosgw exited during start-up: $why"
    fi
    sleep 0.05
  done

  trace "radosgw answers, creating the S3 user"
  if ! radosgw-admin "${CONF[@]}" -n client.admin user create --uid "$RGW_USER" \
      --display-name "insight-export tests" --access-key "$ACCESS_KEY" --secret "$SECRET_KEY" \
      >"$DIR/log/user-create.out" 2>&1; then
    kill_daemons
    die "radosgw-admin user create failed: $(tail -n 20 "$DIR/log/user-create.out")"
  fi

  trace "user created"
  # Optional watchdog: when the process RGW_WATCH_PID ends without calling stop (a killed test
  # run), the cluster is stopped and its directory removed.
  if [[ -n "${RGW_WATCH_PID:-}" ]]; then
    (
      trap '' HUP INT
      while kill -0 "$RGW_WATCH_PID" 2>/dev/null && [[ -f "$DIR/ceph.conf" ]]; do sleep 1; done
      RGW_WATCHDOG=1 "$HERE/radosgw.sh" stop "$DIR" >/dev/null 2>&1 || true
    ) </dev/null >/dev/null 2>&1 &
    echo $! > "$DIR/watchdog.pid"
  fi

  local t1; t1=$(now_ms)
  echo "S3_ENDPOINT=http://127.0.0.1:$PORT"
  echo "S3_ACCESS_KEY_ID=$ACCESS_KEY"
  echo "S3_SECRET_ACCESS_KEY=$SECRET_KEY"
  echo "S3_REGION=us-east-1"
  echo "RGW_START_MS=$(( t1 - t0 ))"
}

stop() {
  [[ -d "$DIR" ]] || return 0
  # Refuse to delete a directory this script did not create.
  [[ -f "$DIR/ceph.conf" && -f "$DIR/pids" ]] || die "$DIR does not look like a radosgw.sh cluster; not removing it"
  if [[ -f "$DIR/watchdog.pid" && -z "${RGW_WATCHDOG:-}" ]]; then
    kill "$(cat "$DIR/watchdog.pid")" 2>/dev/null || true
  fi
  kill_daemons
  rm -rf "$DIR"
}

status() {
  local port="$PORT"
  [[ -n "$port" ]] || port=$(cat "$DIR/port" 2>/dev/null || true)
  [[ -n "$port" ]] || die "no port given and none recorded in $DIR"
  if s3_answers "$port"; then echo "running: http://127.0.0.1:$port"; else echo "not running"; exit 1; fi
}

# For tests of an S3 outage in the middle of a run: only the gateway stops; monitor, OSD and the
# objects stay, and gateway-start brings the same endpoint back.
gateway_stop() {
  [[ -f "$DIR/ceph.conf" && -f "$DIR/pids" ]] || die "$DIR does not look like a radosgw.sh cluster"
  local pid pids=()
  while read -r pid; do
    [[ -n "$pid" ]] || continue
    if [[ "$(cmdline_of "$pid")" == "radosgw "*"$DIR/ceph.conf"* ]]; then pids+=("$pid"); fi
  done < "$DIR/pids"
  [[ ${#pids[@]} -gt 0 ]] || return 0
  kill -KILL "${pids[@]}" 2>/dev/null || true
  local i
  for i in $(seq 1 50); do
    s3_answers "$(cat "$DIR/port")" || return 0
    sleep 0.1
  done
  die "radosgw of $DIR still answers after kill"
}

gateway_start() {
  [[ -f "$DIR/ceph.conf" && -f "$DIR/pids" ]] || die "$DIR does not look like a radosgw.sh cluster"
  local port; port=$(cat "$DIR/port")
  if s3_answers "$port"; then die "port $port already answers HTTP"; fi
  radosgw -c "$DIR/ceph.conf" -n client.rgw -f </dev/null >>"$DIR/log/rgw.out" 2>&1 &
  echo $! >> "$DIR/pids"
  local deadline=$(( $(now_ms) + ${RGW_START_TIMEOUT:-60} * 1000 ))
  until s3_answers "$port"; do
    [[ $(now_ms) -gt $deadline ]] && die "radosgw did not answer on 127.0.0.1:$port again"
    sleep 0.05
  done
  echo "S3_ENDPOINT=http://127.0.0.1:$port"
}

case "$CMD" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  gateway-stop) gateway_stop ;;
  gateway-start) gateway_start ;;
  *) usage ;;
esac
