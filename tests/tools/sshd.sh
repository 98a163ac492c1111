#!/usr/bin/env bash
# A throwaway OpenSSH server on 127.0.0.1 for the ssh sandbox provider's
# tests.  Everything lives in one temp folder: host key, user key,
# authorized_keys, sshd_config, pid file and log.
#
#   tests/tools/sshd.sh start      starts sshd on a free port and prints
#                                  KEY=VALUE lines (DIR, PORT, USER,
#                                  USER_KEY, HOST_KEY_PUB, FINGERPRINT, PID)
#   tests/tools/sshd.sh stop DIR   stops that sshd and every process under
#                                  it (connection and session processes
#                                  included), then removes DIR
#
# It logs in as the user who runs it: as root (CI) /run/sshd is created
# for privilege separation; as an unprivileged user sshd runs without
# privilege separation's chroot and accepts only that user.
set -u

SSHD=${SSHD:-/usr/sbin/sshd}

descendants() { # pid -> every process below it, deepest last
  local all kids k
  all=$(ps -e -o pid=,ppid= 2>/dev/null) || return 0
  kids=$1
  local out=""
  while [ -n "$kids" ]; do
    local next=""
    for k in $kids; do
      next="$next $(echo "$all" | awk -v p="$k" '$2 == p {print $1}')"
    done
    next=$(echo $next)
    out="$out $next"
    kids=$next
  done
  echo $out
}

starttime() { # pid -> when it started (field 22 of /proc/PID/stat), or nothing
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }
  set -- $s
  echo "${20}"
}

stop() {
  local dir=$1 pid kids p procs=""
  [ -n "$dir" ] && [ -d "$dir" ] || exit 0
  if [ -f "$dir/sshd.pid" ]; then
    pid=$(cat "$dir/sshd.pid")
    # Only that sshd and what runs under it.  Once a process has gone its
    # pid may soon be any other's (pids wrap quickly on a busy machine, and
    # as root every kill succeeds): signalling a stale pid, and the children
    # of whatever holds it now, can end a whole test run.  So the master is
    # known by its command line, which names its config in DIR, and each
    # process by its start time when it is killed for good.
    if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null |
        grep -qF -- "-f $dir/sshd_config "; then
      # The connection and session processes call setsid(), so they are
      # found by parentage, before the master goes and they are reparented.
      kids=$(descendants "$pid")
      for p in $pid $kids; do procs="$procs $p:$(starttime "$p")"; done
      kill -TERM "$pid" $kids 2>/dev/null
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
      done
      for p in $procs; do
        [ "$(starttime "${p%%:*}")" = "${p#*:}" ] && kill -KILL "${p%%:*}" 2>/dev/null
      done
    fi
  fi
  case "$dir" in
    */sluice-sshd.*) rm -rf "$dir" ;;
  esac
}

start() {
  [ -x "$SSHD" ] || { echo "SKIP=no sshd at $SSHD (install openssh-server)"; exit 3; }
  command -v ssh-keygen >/dev/null || { echo "SKIP=no ssh-keygen"; exit 3; }
  local dir user
  dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-sshd.XXXXXX") || exit 1
  chmod 700 "$dir"
  user=$(id -un)
  ssh-keygen -q -t ed25519 -N '' -C sluice-test-host -f "$dir/host_ed25519" || exit 1
  ssh-keygen -q -t ed25519 -N '' -C sluice-test-user -f "$dir/user_ed25519" || exit 1
  # a second user key that is NOT authorized (for the "key refused" test)
  ssh-keygen -q -t ed25519 -N '' -C sluice-test-other -f "$dir/other_ed25519" || exit 1
  cp "$dir/user_ed25519.pub" "$dir/authorized_keys"
  chmod 600 "$dir/authorized_keys"
  if [ "$(id -u)" = 0 ]; then
    mkdir -p /run/sshd && chmod 755 /run/sshd
  fi
  local extra=""
  # OpenSSH 9.8+ penalises addresses that fail to log in; the tests fail
  # on purpose, from 127.0.0.1.
  if "$SSHD" -t -f /dev/null -o PerSourcePenalties=no -h "$dir/host_ed25519" >/dev/null 2>&1; then
    extra="PerSourcePenalties no"
  fi
  cat >"$dir/sshd_config" <<EOF
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $user
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
AllowTcpForwarding no
MaxStartups 100:30:200
MaxSessions 10
LoginGraceTime 30
Subsystem sftp internal-sftp
LogLevel ERROR
$extra
EOF
  local port ok=0
  for _ in $(seq 20); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    # sshd binds before it detaches, so its exit status says whether the
    # port was free; the pid file appears once it listens.
    if "$SSHD" -f "$dir/sshd_config" -o "Port=$port" -E "$dir/sshd.log" 2>>"$dir/sshd.log"; then
      for _ in $(seq 100); do
        [ -s "$dir/sshd.pid" ] && { ok=1; break; }
        sleep 0.02
      done
      [ $ok = 1 ] && break
    fi
  done
  if [ $ok != 1 ]; then
    echo "ERROR=sshd did not start; log: $(tail -3 "$dir/sshd.log" | tr '\n' ' ')"
    stop "$dir"
    exit 1
  fi
  local fp
  fp=$(ssh-keygen -l -E sha256 -f "$dir/host_ed25519.pub" | awk '{print $2}')
  echo "DIR=$dir"
  echo "PORT=$port"
  echo "USER=$user"
  echo "USER_KEY=$dir/user_ed25519"
  echo "OTHER_KEY=$dir/other_ed25519"
  echo "HOST_KEY_PUB=$dir/host_ed25519.pub"
  echo "FINGERPRINT=$fp"
  echo "PID=$(cat "$dir/sshd.pid")"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: $0 start | stop DIR" >&2; exit 2 ;;
esac
