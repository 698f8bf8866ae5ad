#!/usr/bin/env bash
# podman-local.sh: Podman's Docker-compatible API on this machine, rootful and
# rootless, for tests and benchmarks.
#
#   scripts/podman-local.sh install     install Debian's podman and what it needs, if missing
#   scripts/podman-local.sh up          install Debian's podman if missing, make the
#                                       test user, start both services, load the images
#   scripts/podman-local.sh env         print export lines: SWEBOX_PODMAN_ROOTFUL_HOST,
#                                       SWEBOX_PODMAN_ROOTLESS_HOST, SWEBOX_PODMAN_USER
#   scripts/podman-local.sh as-user CMD...  run CMD as the test user, with DOCKER_HOST
#                                       on the rootless service (tests of rootless Podman
#                                       run as the engine's user, as its users do)
#   scripts/podman-local.sh down        stop both services and remove their containers
#
# Rootful: `podman system service` as root, with storage of its own under
# $SWEBOX_PODMAN_STORAGE (default /var/lib/swebox-podman), so that nothing else's
# containers or images are touched. Rootless: the same service run by the
# unprivileged test user $SWEBOX_PODMAN_USER (default swebox-podman, made with
# subordinate uid and gid ranges), with overlay storage in its home. Images come
# from the Docker engine (`docker save | podman load`), by default
# $SWEBOX_TEST_IMAGE; a loaded image is not loaded again.
set -euo pipefail

RUN=${SWEBOX_PODMAN_RUN:-/run/swebox-podman}
STORAGE=${SWEBOX_PODMAN_STORAGE:-/var/lib/swebox-podman}
PUSER=${SWEBOX_PODMAN_USER:-swebox-podman}
IMAGES=${SWEBOX_PODMAN_IMAGES:-${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}}
ROOTFUL_SOCK=$RUN/rootful/podman.sock
ROOTLESS_DIR=$RUN/rootless
ROOTLESS_SOCK=$ROOTLESS_DIR/podman.sock
export PATH=$PATH:/usr/sbin:/sbin

log() { printf 'podman-local: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

rootful() { podman --root "$STORAGE/storage" --runroot "$RUN/rootful/run" "$@"; }
user_home() { getent passwd "$PUSER" | cut -d: -f6; }
# as_user runs a command as the test user, with a temporary directory of its
# own: what root's runs left in /tmp (swebox-work, say) is not the user's.
as_user() {
  local home
  home=$(user_home)
  runuser -u "$PUSER" -- mkdir -p "$home/tmp"
  runuser -u "$PUSER" -- env -i PATH="$PATH" HOME="$home" USER="$PUSER" \
    XDG_RUNTIME_DIR="$ROOTLESS_DIR" TMPDIR="$home/tmp" "$@"
}
rootless() { as_user podman "$@"; }

answers() { curl -fsS --max-time 5 --unix-socket "$1" http://d/_ping >/dev/null 2>&1; }

wait_sock() {
  local sock=$1 logf=$2
  for _ in $(seq 1 100); do
    answers "$sock" && return 0
    sleep 0.1
  done
  tail -20 "$logf" >&2 || true
  die "the service on $sock did not answer; see $logf"
}

install() {
  local missing=()
  command -v podman >/dev/null || missing+=(podman)
  [ -x /usr/libexec/podman/catatonit ] || missing+=(catatonit)
  command -v newuidmap >/dev/null || missing+=(uidmap)
  command -v fuse-overlayfs >/dev/null || missing+=(fuse-overlayfs)
  command -v slirp4netns >/dev/null || missing+=(slirp4netns)
  command -v curl >/dev/null || missing+=(curl)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

make_user() {
  if ! id "$PUSER" >/dev/null 2>&1; then
    log "making the test user $PUSER"
    useradd -m -s /bin/bash "$PUSER"
  fi
  grep -q "^$PUSER:" /etc/subuid || echo "$PUSER:200000:65536" >>/etc/subuid
  grep -q "^$PUSER:" /etc/subgid || echo "$PUSER:200000:65536" >>/etc/subgid
  # Rootless networking (slirp4netns, for a sandbox that relaxes network
  # none) opens /dev/net/tun, which the kernel and udev make 0666; some
  # machines ship it 0600.
  [ -c /dev/net/tun ] && chmod 0666 /dev/net/tun
  local conf
  conf="$(user_home)/.config/containers/storage.conf"
  if [ ! -f "$conf" ]; then
    # The kernel's own overlay works in a user namespace; without this
    # file rootless Podman falls back to vfs, a full copy per container.
    as_user mkdir -p "$(dirname "$conf")"
    printf '[storage]\ndriver = "overlay"\n' | as_user tee "$conf" >/dev/null
  fi
}

# engine_conf is the containers.conf [engine] table both services share.
# An exec session's monitor (conmon) waits exit_command_delay after the
# session ends before it cleans up and exits (300 s by default); a test
# run's hundreds of execs would keep hundreds of them waiting.
engine_conf() {
  printf '[engine]\nexit_command_delay = 5\n'
}

start_rootful() {
  mkdir -p "$RUN/rootful" "$STORAGE"
  answers "$ROOTFUL_SOCK" && return 0
  log "starting the rootful service on $ROOTFUL_SOCK"
  rm -f "$ROOTFUL_SOCK"
  # Podman gives a rootful container or build step RLIMIT_NPROC 1048576
  # unless told otherwise, which runc cannot set where root lacks
  # CAP_SYS_RESOURCE or the kernel caps it at pid_max ("error setting rlimit
  # type 6"). sandbox sets it on its containers itself; builds (buildah's RUN
  # steps) take this default.
  { printf '[containers]\ndefault_ulimits = ["nproc=%s:%s"]\n' \
    "$(cat /proc/sys/kernel/pid_max)" "$(cat /proc/sys/kernel/pid_max)"; engine_conf; } >"$RUN/rootful/containers.conf"
  # The service runs in its own directory: conmon writes files into its
  # working directory (an "oom" marker when a container's process is
  # killed for memory), which would otherwise be the caller's.
  (cd "$RUN/rootful" && CONTAINERS_CONF=$RUN/rootful/containers.conf exec setsid podman --root "$STORAGE/storage" \
    --runroot "$RUN/rootful/run" \
    system service --time 0 "unix://$ROOTFUL_SOCK" >"$RUN/rootful/service.log" 2>&1 </dev/null) &
  echo $! >"$RUN/rootful/service.pid"
  wait_sock "$ROOTFUL_SOCK" "$RUN/rootful/service.log"
}

start_rootless() {
  mkdir -p "$ROOTLESS_DIR"
  chown "$PUSER:" "$ROOTLESS_DIR"
  chmod 700 "$ROOTLESS_DIR"
  answers "$ROOTLESS_SOCK" && return 0
  log "starting the rootless service of $PUSER on $ROOTLESS_SOCK"
  rm -f "$ROOTLESS_SOCK"
  engine_conf >"$ROOTLESS_DIR/containers.conf"
  chown "$PUSER:" "$ROOTLESS_DIR/containers.conf"
  (cd "$ROOTLESS_DIR" && exec setsid runuser -u "$PUSER" -- env -i PATH="$PATH" HOME="$(user_home)" USER="$PUSER" \
    XDG_RUNTIME_DIR="$ROOTLESS_DIR" CONTAINERS_CONF="$ROOTLESS_DIR/containers.conf" \
    podman system service --time 0 "unix://$ROOTLESS_SOCK" >"$RUN/rootless.log" 2>&1 </dev/null) &
  echo $! >"$RUN/rootless.pid"
  wait_sock "$ROOTLESS_SOCK" "$RUN/rootless.log"
}

# load_images copies each image from Docker into one Podman storage (rootful
# or rootless) unless it holds the same image id already.
load_images() {
  local which=$1 img id
  for img in $IMAGES; do
    id=$(docker image inspect --format '{{.Id}}' "$img" 2>/dev/null) || die "image $img is not in Docker"
    if [ "$("$which" image inspect --format '{{.Id}}' "$img" 2>/dev/null || true)" = "${id#sha256:}" ]; then
      continue
    fi
    log "loading $img into the $which storage"
    docker save "$img" | "$which" load -q >/dev/null || die "could not load $img into the $which storage"
  done
}

cmd_up() {
  [ "$(id -u)" -eq 0 ] || die "up needs root"
  install
  make_user
  start_rootful
  start_rootless
  load_images rootful
  load_images rootless
  log "up: rootful unix://$ROOTFUL_SOCK, rootless unix://$ROOTLESS_SOCK (user $PUSER)"
}

cmd_env() {
  echo "export SWEBOX_PODMAN_ROOTFUL_HOST=unix://$ROOTFUL_SOCK"
  echo "export SWEBOX_PODMAN_ROOTLESS_HOST=unix://$ROOTLESS_SOCK"
  echo "export SWEBOX_PODMAN_USER=$PUSER"
}

cmd_as_user() {
  as_user DOCKER_HOST="unix://$ROOTLESS_SOCK" "$@"
}

stop_service() {
  local pidf=$1 pid
  [ -f "$pidf" ] || return 0
  pid=$(cat "$pidf")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidf"
}

cmd_down() {
  # The storages are this script's alone: every container in them is a
  # test's.
  if answers "$ROOTFUL_SOCK"; then rootful rm -af -t 0 >/dev/null 2>&1 || true; fi
  if id "$PUSER" >/dev/null 2>&1 && answers "$ROOTLESS_SOCK"; then rootless rm -af -t 0 >/dev/null 2>&1 || true; fi
  stop_service "$RUN/rootful/service.pid"
  stop_service "$RUN/rootless.pid"
  rm -f "$ROOTFUL_SOCK" "$ROOTLESS_SOCK"
  # What outlives the services: the monitors (conmon) of exec sessions
  # whose containers are gone, by the storage they name, and the rootless
  # user's pause process. The storages and the user are this script's.
  pkill -f -- "^/usr/bin/conmon .*$STORAGE/storage/" 2>/dev/null || true
  if id "$PUSER" >/dev/null 2>&1; then
    pkill -u "$PUSER" -x conmon 2>/dev/null || true
    pkill -u "$PUSER" -x catatonit 2>/dev/null || true
  fi
}

case ${1:-} in
install) [ "$(id -u)" -eq 0 ] || die "install needs root"; install ;;
up) cmd_up ;;
env) cmd_env ;;
as-user) shift; cmd_as_user "$@" ;;
down) cmd_down ;;
*) die "usage: $0 install|up|env|as-user CMD...|down" ;;
esac
