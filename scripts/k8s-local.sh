#!/usr/bin/env bash
# k8s-local.sh: a real Kubernetes cluster on this machine, offline, for tests.
#
#   scripts/k8s-local.sh build              build (or reuse) the cached binaries
#   scripts/k8s-local.sh up [--nodes 1|2]   start etcd, the control plane, 1 or 2 nodes
#   scripts/k8s-local.sh env                print export SWEBOX_TEST_KUBECONFIG=...
#   scripts/k8s-local.sh down               stop everything and remove every trace
#   scripts/k8s-local.sh enforcer stop|start stop or restart the NetworkPolicy enforcer (tests)
#   scripts/k8s-local.sh kubelet stop|start N stop or restart node N's kubelet (tests of a lost node)
#   scripts/k8s-local.sh import IMAGE...     copy images from Docker into every node's containerd
#   scripts/k8s-local.sh unimport IMAGE...   remove those images from every node's containerd
#   scripts/k8s-local.sh running N           list NAMESPACE/POD of each running container of node N's containerd
#   scripts/k8s-local.sh registry start|stop  start (up does) or stop the cluster's image registry
#
# Upstream Kubernetes components are built from the Go module proxy (a wrapper
# module that requires k8s.io/kubernetes and replaces its staging modules with the
# published ones); etcd, the CNI plugins and ipset come from Debian packages
# (apt-get download + dpkg-deb -x: no service is installed or started); the nodes
# run on a second containerd with its own socket, root and state (Docker's
# containerd is left alone) and on the host's runc; kube-router (firewall only)
# enforces NetworkPolicy; the pause image is built from Kubernetes' pause.c.
# Debian's docker-registry serves images to the nodes as a registry serves a
# real cluster's (see cmd_registry).
#
# Binaries are cached by version under $SWEBOX_K8S_CACHE (default
# /var/cache/swebox-k8s): a cold build takes minutes, a cached `up` seconds.
# Runtime state lives under $SWEBOX_K8S_RUN (default /run/swebox-k8s); `down`
# removes it with every process, iptables chain, network namespace, mount and
# cgroup the cluster made, and keeps only the build cache.
set -euo pipefail

K8S_VERSION=${SWEBOX_K8S_VERSION:-v1.37.2}
STAGING_VERSION=v0.${K8S_VERSION#v1.}
KUBE_ROUTER_VERSION=v2.1.0
CACHE=${SWEBOX_K8S_CACHE:-/var/cache/swebox-k8s}
RUN=${SWEBOX_K8S_RUN:-/run/swebox-k8s}
IMAGES=${SWEBOX_K8S_IMAGES:-${SWEBOX_TEST_IMAGE:-swebox/python:bookworm}}
BIN=$CACHE/$K8S_VERSION/bin
DEB=$CACHE/debs
PAUSE_IMAGE=registry.k8s.io/pause:3.10
NODE_IP=${SWEBOX_K8S_NODE_IP:-}
API_PORT=6443
REGISTRY_ADDR=127.0.0.1:${SWEBOX_K8S_REGISTRY_PORT:-5000}
ETCD_PORT=2479
SERVICE_CIDR=10.96.0.0/16
CLUSTER_CIDR=10.244.0.0/16
export PATH=$PATH:/usr/local/go/bin:/usr/sbin:/sbin

log() { printf 'k8s-local: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- build

build_kube() {
  [ -x "$BIN/kubelet" ] && [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ] &&
    [ -x "$BIN/kube-scheduler" ] && [ -x "$BIN/kubectl" ] && return 0
  local src=$CACHE/$K8S_VERSION/src
  mkdir -p "$src" "$BIN"
  log "building Kubernetes $K8S_VERSION from the module proxy (minutes, once)"
  cat >"$src/go.mod" <<EOF
module swebox.local/k8s-build

go 1.26.0

require k8s.io/kubernetes $K8S_VERSION
EOF
  local gomod
  gomod=$(cd "$src" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)
  # Every `k8s.io/x => ./staging/...` replacement becomes the published k8s.io/x.
  local args=()
  while read -r m; do
    args+=("-replace=$m=$m@$STAGING_VERSION")
  done < <(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/.*#\1#p' "$gomod")
  [ ${#args[@]} -gt 10 ] || die "found no staging replacements in $gomod"
  (cd "$src" && go mod edit "${args[@]}")
  local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl) pkgs=() c
  for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$BIN.tmp/" \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
    "${pkgs[@]}")
  for c in "${cmds[@]}"; do mv "$BIN.tmp/$c" "$BIN/$c"; done
  rmdir "$BIN.tmp"
}

build_router() {
  [ -x "$CACHE/kube-router-$KUBE_ROUTER_VERSION/kube-router" ] && return 0
  log "building kube-router $KUBE_ROUTER_VERSION"
  mkdir -p "$CACHE/kube-router-$KUBE_ROUTER_VERSION"
  GOBIN=$CACHE/kube-router-$KUBE_ROUTER_VERSION.tmp CGO_ENABLED=0 \
    go install -trimpath -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION"
  mv "$CACHE/kube-router-$KUBE_ROUTER_VERSION.tmp/kube-router" "$CACHE/kube-router-$KUBE_ROUTER_VERSION/"
  rmdir "$CACHE/kube-router-$KUBE_ROUTER_VERSION.tmp"
}

build_debs() {
  [ -x "$DEB/root/usr/bin/etcd" ] && [ -x "$DEB/root/usr/lib/cni/bridge" ] && [ -x "$DEB/root/sbin/ipset" ] && return 0
  log "fetching etcd, CNI plugins and ipset from Debian"
  mkdir -p "$DEB/pkgs" "$DEB/root"
  (cd "$DEB/pkgs" && { apt-get download etcd-server containernetworking-plugins ipset libipset13 2>/dev/null ||
    { apt-get update -qq && apt-get download etcd-server containernetworking-plugins ipset libipset13; }; })
  local f
  for f in "$DEB"/pkgs/*.deb; do dpkg-deb -x "$f" "$DEB/root"; done
  [ -x "$DEB/root/sbin/ipset" ] || { mkdir -p "$DEB/root/sbin"; ln -sf ../usr/sbin/ipset "$DEB/root/sbin/ipset"; }
}

build_pause() {
  [ -f "$CACHE/pause/pause.oci.tar" ] && return 0
  log "building the pause image from Kubernetes' pause.c"
  local dir t
  dir=$(cd "$CACHE/$K8S_VERSION/src" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .Dir)
  t=$(mktemp -d)
  mkdir -p "$t/rootfs" "$t/oci/blobs/sha256"
  gcc -Os -static -Wall -DVERSION="$K8S_VERSION" -o "$t/rootfs/pause" "$dir/build/pause/linux/pause.c"
  # An OCI image archive by hand: one layer, a config, a manifest, an index.
  tar -C "$t/rootfs" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$t/layer.tar" pause
  local layer lsize config csize manifest msize
  layer=$(sha256sum "$t/layer.tar" | cut -d' ' -f1)
  lsize=$(stat -c %s "$t/layer.tar")
  mv "$t/layer.tar" "$t/oci/blobs/sha256/$layer"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$layer" >"$t/config.json"
  config=$(sha256sum "$t/config.json" | cut -d' ' -f1)
  csize=$(stat -c %s "$t/config.json")
  mv "$t/config.json" "$t/oci/blobs/sha256/$config"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$config" "$csize" "$layer" "$lsize" >"$t/manifest.json"
  manifest=$(sha256sum "$t/manifest.json" | cut -d' ' -f1)
  msize=$(stat -c %s "$t/manifest.json")
  mv "$t/manifest.json" "$t/oci/blobs/sha256/$manifest"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$manifest" "$msize" "$PAUSE_IMAGE" "${PAUSE_IMAGE##*:}" >"$t/oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$t/oci/oci-layout"
  mkdir -p "$CACHE/pause"
  tar -C "$t/oci" -cf "$CACHE/pause/pause.oci.tar.tmp" oci-layout index.json blobs
  mv "$CACHE/pause/pause.oci.tar.tmp" "$CACHE/pause/pause.oci.tar"
  rm -rf "$t"
}

cmd_build() {
  command -v go >/dev/null || die "go is not installed"
  build_debs
  build_kube
  build_router
  build_pause
  log "binaries cached under $CACHE"
}

# ---------------------------------------------------------------- up

node_ip() {
  [ -n "$NODE_IP" ] && { echo "$NODE_IP"; return; }
  local ip
  ip=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  [ -n "$ip" ] || ip=$(hostname -I | awk '{print $1}')
  [ -n "$ip" ] || die "cannot find this host's IPv4 address; set SWEBOX_K8S_NODE_IP"
  echo "$ip"
}

# cert NAME CN O SANS: a key and a certificate signed by the cluster CA.
cert() {
  local name=$1 cn=$2 o=$3 sans=$4 pki=$RUN/pki
  openssl ecparam -genkey -name prime256v1 -noout -out "$pki/$name.key" 2>/dev/null
  local subj="/CN=$cn"
  [ -n "$o" ] && subj="/O=$o$subj"
  openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -n "$sans" ] && echo "subjectAltName=$sans"
  } >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 30 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

# kubeconfig NAME CERT: a kubeconfig for the client certificate CERT.
kubeconfig() {
  local pki=$RUN/pki
  cat >"$RUN/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: swebox-local
  cluster:
    server: https://$IP:$API_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: swebox-local
  context: {cluster: swebox-local, user: $2}
current-context: swebox-local
EOF
}

make_pki() {
  local pki=$RUN/pki
  mkdir -p "$pki"
  openssl ecparam -genkey -name prime256v1 -noout -out "$pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=swebox-local-ca" -days 30 -sha256 -out "$pki/ca.crt" 2>/dev/null
  cert apiserver kube-apiserver "" \
    "IP:$IP,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters ""
  cert admin swebox-admin system:masters ""
  cert controller-manager system:kube-controller-manager "" ""
  cert scheduler system:kube-scheduler "" ""
  cert kube-router kube-router system:masters ""
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  kubeconfig admin admin
  kubeconfig controller-manager controller-manager
  kubeconfig scheduler scheduler
  kubeconfig kube-router kube-router
}

# start NAME CMD...: run a daemon in the background, logging to $RUN/logs.
start() {
  local name=$1
  shift
  setsid "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/pids/$name"
}

# wait_for WHAT SECONDS CMD...: retry CMD until it succeeds.
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs * 5; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  die "$what did not come up in ${secs}s; logs under $RUN/logs"
}

kctl() { "$BIN/kubectl" --kubeconfig "$RUN/admin.kubeconfig" "$@"; }

# node_up N: a containerd and a kubelet for node N (1 or 2).
node_up() {
  local n=$1 d=$RUN/node$1 name=swebox-node$1
  local kport=$((10250 + (n - 1) * 10)) hport=$((10248 + (n - 1) * 20))
  mkdir -p "$d/cni" "$d/kubelet"
  cert "kubelet-$n" "system:node:$name" system:nodes "DNS:$name,IP:$IP"
  kubeconfig "kubelet-$n" "kubelet-$n"
  cat >"$d/containerd.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$DEB/root/usr/lib/cni"
    conf_dir = "$d/cni"
EOF
  cat >"$d/cni/10-swebox.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "swebox-k8s-$n",
  "plugins": [{
    "type": "bridge",
    "bridge": "swebox-br$n",
    "isGateway": true,
    "ipMasq": true,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "10.244.$n.0/24"}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": "$d/ipam"
    }
  }]
}
EOF
  start "containerd-$n" containerd --config "$d/containerd.toml"
  wait_for "containerd $n" 30 ctr --address "$d/containerd.sock" version
  # Every hierarchy needs the node's cgroup root before the kubelet starts.
  local h
  for h in /sys/fs/cgroup/*/; do
    [ -f "$h/cgroup.procs" ] && mkdir -p "$h/swebox-node$n"
  done
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 0.0.0.0
port: $kport
healthzBindAddress: 127.0.0.1
healthzPort: $hport
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $RUN/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $RUN/pki/kubelet-$n.crt
tlsPrivateKeyFile: $RUN/pki/kubelet-$n.key
cgroupDriver: cgroupfs
cgroupRoot: /swebox-node$n
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
podPidsLimit: ${SWEBOX_K8S_POD_PIDS_LIMIT:-512}
maxPods: 110
containerRuntimeEndpoint: unix://$d/containerd.sock
staticPodPath: ""
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
resolvConf: /etc/resolv.conf
# Each node's pod logs apart: the kubelets share this machine, and a
# kubelet's garbage collector removes the log directories of pods it does
# not know, those of the other node's pods included.
podLogsDir: $d/pod-logs
EOF
  start "kubelet-$n" "$BIN/kubelet" --config="$d/kubelet.yaml" --kubeconfig="$RUN/kubelet-$n.kubeconfig" \
    --root-dir="$d/kubelet" --hostname-override="$name" --node-ip="$IP" --v=1
}

# import_images N: the pause image and the test images into node N's
# containerd, from the archive that up saves once.
import_images() {
  local d=$RUN/node$1
  ctr --address "$d/containerd.sock" -n k8s.io images import "$CACHE/pause/pause.oci.tar" >/dev/null
  ctr --address "$d/containerd.sock" -n k8s.io images import "$RUN/images.tar" >/dev/null
}

# Paths outside $RUN that the kubelet, containerd's CRI or the CNI plugins
# create whatever they are configured with; down removes those that did not
# exist before up.
OUTSIDE=(/var/lib/kubelet /var/lib/cni /var/log/pods /var/log/containers /var/lib/kube-router /etc/cni /opt/cni)

cmd_up() {
  local nodes=1
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) nodes=${2:-}; shift 2 ;;
      --nodes=*) nodes=${1#*=}; shift ;;
      *) die "up: unknown argument $1" ;;
    esac
  done
  case $nodes in 1 | 2) ;; *) die "--nodes must be 1 or 2" ;; esac
  [ -e "$RUN/pids" ] && die "a cluster is already up (state in $RUN); run '$0 down' first"
  local t0=$SECONDS
  cmd_build
  mkdir -p "$RUN/logs" "$RUN/pids"
  local p
  for p in "${OUTSIDE[@]}"; do [ -e "$p" ] && echo "$p"; done >"$RUN/baseline.paths"
  ls /run/netns 2>/dev/null >"$RUN/baseline.netns" || true
  IP=$(node_ip)
  echo "$IP" >"$RUN/node-ip"
  make_pki
  local pki=$RUN/pki
  start etcd "$DEB/root/usr/bin/etcd" --name swebox --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "swebox=http://127.0.0.1:$((ETCD_PORT + 1))"
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=0.0.0.0 --secure-port="$API_PORT" --advertise-address="$IP" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --service-cluster-ip-range="$SERVICE_CIDR" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --profiling=false
  wait_for kube-apiserver 90 kctl get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$RUN/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$RUN/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$RUN/controller-manager.kubeconfig" \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
    --node-monitor-grace-period=20s --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$RUN/scheduler.kubeconfig" \
    --authentication-kubeconfig="$RUN/scheduler.kubeconfig" \
    --authorization-kubeconfig="$RUN/scheduler.kubeconfig" --leader-elect=false --profiling=false
  local n
  local img
  for img in $IMAGES; do
    docker image inspect "$img" >/dev/null 2>&1 || die "image $img is not in Docker; build it first"
  done
  # shellcheck disable=SC2086 # a list of image names
  docker save -o "$RUN/images.tar" $IMAGES
  local pids=()
  for ((n = 1; n <= nodes; n++)); do
    node_up "$n"
    import_images "$n" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || die "importing images into a node failed"; done
  rm -f "$RUN/images.tar"
  for ((n = 1; n <= nodes; n++)); do
    wait_for "node swebox-node$n" 60 kctl get node "swebox-node$n"
    kctl patch node "swebox-node$n" --type=merge \
      -p "{\"spec\":{\"podCIDR\":\"10.244.$n.0/24\",\"podCIDRs\":[\"10.244.$n.0/24\"]}}" >/dev/null
  done
  start_router
  kctl wait --for=condition=Ready node --all --timeout=90s >/dev/null ||
    die "nodes not Ready; logs under $RUN/logs"
  wait_for "the default service account" 60 kctl -n default get serviceaccount default
  cmd_registry start
  log "cluster up with $nodes node(s) in $((SECONDS - t0)) s; kubeconfig $RUN/admin.kubeconfig"
}

# start_router starts the NetworkPolicy enforcer. Every node is a process on
# this host with the same IP, so the enforcer of node 1 sees the pods of all
# nodes as local.
start_router() {
  PATH=$DEB/root/usr/sbin:$PATH LD_LIBRARY_PATH=$DEB/root/usr/lib/x86_64-linux-gnu \
    start kube-router "$CACHE/kube-router-$KUBE_ROUTER_VERSION/kube-router" \
    --kubeconfig="$RUN/kube-router.kubeconfig" --hostname-override=swebox-node1 \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --enable-ipv6=false --metrics-port=0 --health-port=0
}

# cmd_enforcer stop|start: take the NetworkPolicy enforcer away and bring it
# back, for the test that the sandbox refuses an unenforced namespace.
cmd_enforcer() {
  [ -d "$RUN/pids" ] || die "no cluster is up"
  case ${1:-} in
    stop) stop_pid "$RUN/pids/kube-router"; rm -f "$RUN/pids/kube-router" ;;
    start) [ -f "$RUN/pids/kube-router" ] && kill -0 "$(cat "$RUN/pids/kube-router")" 2>/dev/null || start_router ;;
    *) die "usage: $0 enforcer stop|start" ;;
  esac
}

# cmd_kubelet stop|start N: take node N's kubelet away (the node goes
# NotReady, its pods are unreachable) and bring it back with the same
# configuration. containerd keeps running, so the node's containers live on
# until the restarted kubelet removes the pods the API server deleted.
cmd_kubelet() {
  [ -d "$RUN/pids" ] || die "no cluster is up"
  local n=${2:-} d
  [ -n "$n" ] && [ -d "$RUN/node$n" ] || die "usage: $0 kubelet stop|start N (a node that is up)"
  d=$RUN/node$n
  case ${1:-} in
    stop) stop_pid "$RUN/pids/kubelet-$n"; rm -f "$RUN/pids/kubelet-$n" ;;
    start)
      if ! { [ -f "$RUN/pids/kubelet-$n" ] && kill -0 "$(cat "$RUN/pids/kubelet-$n")" 2>/dev/null; }; then
        start "kubelet-$n" "$BIN/kubelet" --config="$d/kubelet.yaml" --kubeconfig="$RUN/kubelet-$n.kubeconfig" \
          --root-dir="$d/kubelet" --hostname-override="swebox-node$n" --node-ip="$(cat "$RUN/node-ip")" --v=1
      fi
      kctl wait --for=condition=Ready "node/swebox-node$n" --timeout=120s >/dev/null ||
        die "node swebox-node$n is not Ready again; logs under $RUN/logs"
      ;;
    *) die "usage: $0 kubelet stop|start N" ;;
  esac
}

# cmd_running N: NAMESPACE/POD of each container with a running task in
# node N's containerd, whether or not its kubelet runs (tests of a lost node
# check that the restarted kubelet killed the pods deleted meanwhile).
cmd_running() {
  [ -d "$RUN/pids" ] || die "no cluster is up"
  local n=${1:-} d c info ns pod
  [ -n "$n" ] && [ -d "$RUN/node$n" ] || die "usage: $0 running N (a node that is up)"
  d=$RUN/node$n
  for c in $(ctr --address "$d/containerd.sock" -n k8s.io tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING" { print $1 }'); do
    info=$(ctr --address "$d/containerd.sock" -n k8s.io containers info "$c" 2>/dev/null) || continue
    ns=$(sed -n 's/^ *"io.kubernetes.pod.namespace": "\([^"]*\)".*/\1/p' <<<"$info" | head -1)
    pod=$(sed -n 's/^ *"io.kubernetes.pod.name": "\([^"]*\)".*/\1/p' <<<"$info" | head -1)
    if [ -n "$pod" ]; then echo "$ns/$pod"; fi
  done | sort -u
}

# cmd_import IMAGE...: images from Docker into every node that is up.
cmd_import() {
  [ -d "$RUN/pids" ] || die "no cluster is up"
  [ $# -gt 0 ] || die "usage: $0 import IMAGE..."
  local img d tar
  for img in "$@"; do
    docker image inspect "$img" >/dev/null 2>&1 || die "image $img is not in Docker"
  done
  tar=$(mktemp "$RUN/import.XXXXXX.tar")
  docker save -o "$tar" "$@"
  for d in "$RUN"/node[0-9]*; do
    ctr --address "$d/containerd.sock" -n k8s.io images import "$tar" >/dev/null ||
      { rm -f "$tar"; die "importing into ${d##*/} failed"; }
  done
  rm -f "$tar"
}

# cri_ref IMAGE: the name containerd gives an image Docker names IMAGE
# (docker.io/library/ and :latest made explicit), the name the kubelet looks
# up for a pod's image.
cri_ref() {
  local ref=$1 first=${1%%/*}
  case $ref in
    */*) case $first in *.*|*:*|localhost) ;; *) ref=docker.io/$ref ;; esac ;;
    *) ref=docker.io/library/$ref ;;
  esac
  case ${ref##*/} in *:*|*@*) ;; *) ref=$ref:latest ;; esac
  echo "$ref"
}

# cmd_unimport IMAGE...: remove images from every node that is up; an image a
# node does not hold is fine. Pods still using one keep running.
cmd_unimport() {
  [ -d "$RUN/pids" ] || die "no cluster is up"
  [ $# -gt 0 ] || die "usage: $0 unimport IMAGE..."
  local img d refs=()
  for img in "$@"; do refs+=("$(cri_ref "$img")"); done
  for d in "$RUN"/node[0-9]*; do
    [ -S "$d/containerd.sock" ] || continue
    for img in "${refs[@]}"; do
      ctr --address "$d/containerd.sock" -n k8s.io images ls -q "name==$img" | grep -q . || continue
      ctr --address "$d/containerd.sock" -n k8s.io images rm --sync "$img" >/dev/null ||
        die "removing $img from ${d##*/} failed"
    done
  done
}

# cmd_registry start|stop: Debian's docker-registry on $REGISTRY_ADDR, its
# storage under $RUN/registry, its access log in $RUN/logs/registry.log (one
# line per request: tests count the nodes' manifest requests there). `up`
# starts it; on a cluster that is already up it can be started alone, and
# `down` stops it with the rest.
#
# It listens on loopback, and that is all the configuration it needs: the
# nodes are processes on this host, and both their containerd (its CRI,
# with no registry configured) and Docker (for `docker push`, `eval images
# build --push`) speak plain HTTP to a registry on a loopback address and
# TLS to any other. So neither daemon is configured or restarted for it, and
# pods name their images 127.0.0.1:PORT/... and pull them as on a real
# cluster. Deleting manifests is enabled so that tests remove what they push.
cmd_registry() {
  [ -d "$RUN/pids" ] || die "no cluster is up"
  local r=$RUN/registry
  case ${1:-} in
    start)
      if [ -f "$RUN/pids/registry" ] && kill -0 "$(cat "$RUN/pids/registry")" 2>/dev/null; then
        return 0
      fi
      command -v docker-registry >/dev/null || die "docker-registry is not installed (apt-get install docker-registry)"
      if curl -fsS -o /dev/null "http://$REGISTRY_ADDR/v2/" 2>/dev/null; then
        die "something else answers on $REGISTRY_ADDR; set SWEBOX_K8S_REGISTRY_PORT"
      fi
      mkdir -p "$r/data"
      cat >"$r/config.yml" <<EOF
version: 0.1
log:
  level: info
  formatter: text
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $r/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
EOF
      start registry docker-registry serve "$r/config.yml"
      wait_for "the registry on $REGISTRY_ADDR" 30 curl -fsS -o /dev/null "http://$REGISTRY_ADDR/v2/"
      echo "$REGISTRY_ADDR" >"$r/address"
      log "registry on $REGISTRY_ADDR (storage $r/data, log $RUN/logs/registry.log)"
      ;;
    stop)
      stop_pid "$RUN/pids/registry"
      rm -rf "$RUN/pids/registry" "$r"
      ;;
    *) die "usage: $0 registry start|stop" ;;
  esac
}

cmd_env() {
  [ -f "$RUN/admin.kubeconfig" ] || die "no cluster is up"
  echo "export SWEBOX_TEST_KUBECONFIG=$RUN/admin.kubeconfig"
  echo "export SWEBOX_TEST_K8S_LOCAL=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
  if [ -f "$RUN/registry/address" ]; then
    echo "export SWEBOX_TEST_REGISTRY=$(cat "$RUN/registry/address")"
    echo "export SWEBOX_TEST_REGISTRY_LOG=$RUN/logs/registry.log"
  fi
}

# ---------------------------------------------------------------- down

# stop_pid FILE: TERM, then KILL after 10 s, the process whose pid FILE holds.
stop_pid() {
  local pid i
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
}

# our_pids: processes whose command line names a path under $RUN (the
# containerd shims of our nodes and anything else started for them).
our_pids() {
  local p
  for p in /proc/[0-9]*; do
    # The bracket keeps this grep from matching its own command line.
    { tr "\0" " " <"$p/cmdline"; } 2>/dev/null | grep -qE -- "$RUN/[a-z]" && echo "${p#/proc/}"
  done
  return 0
}

clean_iptables() {
  local ipt table chain rule
  for ipt in iptables ip6tables; do
    for table in filter nat mangle raw; do
      "$ipt-save" -t "$table" >/dev/null 2>&1 || continue
      # Rules of built-in chains that jump to our chains, then our chains.
      { "$ipt-save" -t "$table" 2>/dev/null | grep -E '^-A [A-Z]+ .*-j (KUBE-|CNI-)' | grep -vE '^-A (KUBE-|CNI-)' || true; } |
        while read -r rule; do
          eval "$ipt -t $table ${rule/-A /-D }" 2>/dev/null || true
        done
      for chain in $("$ipt-save" -t "$table" 2>/dev/null | sed -n 's/^:\(\(KUBE-\|CNI-\)[^ ]*\) .*/\1/p'); do
        "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$ipt-save" -t "$table" 2>/dev/null | sed -n 's/^:\(\(KUBE-\|CNI-\)[^ ]*\) .*/\1/p'); do
        "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

cmd_down() {
  local t0=$SECONDS n d
  [ -d "$RUN" ] || { log "nothing to tear down"; return 0; }
  stop_pid "$RUN/pids/kube-router"
  stop_pid "$RUN/pids/registry"
  for n in 1 2; do stop_pid "$RUN/pids/kubelet-$n"; done
  # Kill every container of the nodes, then the containerds and their shims.
  for n in 1 2; do
    d=$RUN/node$n
    [ -S "$d/containerd.sock" ] || continue
    local c
    for c in $(ctr --address "$d/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$d/containerd.sock" -n k8s.io tasks kill -s KILL "$c" >/dev/null 2>&1 || true
    done
    sleep 0.5
    for c in $(ctr --address "$d/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$d/containerd.sock" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true
    done
    for c in $(ctr --address "$d/containerd.sock" -n k8s.io containers ls -q 2>/dev/null); do
      ctr --address "$d/containerd.sock" -n k8s.io containers delete "$c" >/dev/null 2>&1 || true
    done
  done
  for n in 1 2; do stop_pid "$RUN/pids/containerd-$n"; done
  for f in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_pid "$RUN/pids/$f"; done
  local pid
  for pid in $(our_pids); do kill -9 "$pid" 2>/dev/null || true; done
  # Network namespaces of pods, made by the CRI after up began.
  local ns
  for ns in $(ls /run/netns 2>/dev/null); do
    grep -qxF "$ns" "$RUN/baseline.netns" 2>/dev/null && continue
    case $ns in cni-*) ip netns delete "$ns" 2>/dev/null || { umount -l "/run/netns/$ns" 2>/dev/null; rm -f "/run/netns/$ns"; } ;; esac
  done
  # Mounts: emptyDirs, rootfs overlays, shm, under our state directory.
  local m
  for m in $(findmnt -rn -o TARGET | grep -F -- "$RUN/" | sort -r); do umount -l "$m" 2>/dev/null || true; done
  for n in 1 2; do ip link delete "swebox-br$n" 2>/dev/null || true; done
  clean_iptables
  local set
  for set in $(LD_LIBRARY_PATH=$DEB/root/usr/lib/x86_64-linux-gnu "$DEB/root/usr/sbin/ipset" list -n 2>/dev/null |
    grep -E '^(KUBE-|kube-router-)' || true); do
    LD_LIBRARY_PATH=$DEB/root/usr/lib/x86_64-linux-gnu "$DEB/root/usr/sbin/ipset" destroy "$set" 2>/dev/null || true
  done
  # Cgroups: the node roots, deepest first.
  local h
  for n in 1 2; do
    for h in /sys/fs/cgroup/*/swebox-node$n; do
      [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  done
  local p
  for p in "${OUTSIDE[@]}"; do
    [ -e "$p" ] || continue
    grep -qxF "$p" "$RUN/baseline.paths" 2>/dev/null && continue
    # /var/log/containers holds symlinks into /var/log/pods only.
    rm -rf "$p"
  done
  rm -rf "$RUN"
  local left
  left=$(check_clean)
  [ -z "$left" ] || die "teardown left: $left"
  log "cluster down in $((SECONDS - t0)) s; no trace left (build cache kept in $CACHE)"
}

# check_clean prints what of a cluster remains on this host, nothing when clean.
check_clean() {
  local out=()
  [ -z "$(our_pids)" ] || out+=("processes $(our_pids | tr '\n' ' ')")
  [ -e "$RUN" ] && out+=("$RUN")
  local ipt
  for ipt in iptables-save ip6tables-save; do
    "$ipt" 2>/dev/null | grep -qE '^:(KUBE-|CNI-)' && out+=("$ipt chains")
  done
  findmnt -rn -o TARGET | grep -qF -- "$RUN/" && out+=("mounts")
  ls -d /sys/fs/cgroup/*/swebox-node* >/dev/null 2>&1 && out+=("cgroups")
  ip link show 2>/dev/null | grep -q 'swebox-br' && out+=("bridges")
  echo "${out[*]}"
}

case ${1:-} in
  build) cmd_build ;;
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  env) cmd_env ;;
  enforcer) shift; cmd_enforcer "$@" ;;
  kubelet) shift; cmd_kubelet "$@" ;;
  running) shift; cmd_running "$@" ;;
  import) shift; cmd_import "$@" ;;
  unimport) shift; cmd_unimport "$@" ;;
  registry) shift; cmd_registry "$@" ;;
  check-clean) left=$(check_clean); [ -z "$left" ] || die "left: $left" ;;
  *) die "usage: $0 build|up [--nodes 1|2]|down|env|enforcer stop|start|kubelet stop|start N|running N|import IMAGE...|unimport IMAGE...|registry start|stop|check-clean" ;;
esac
