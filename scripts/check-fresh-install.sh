#!/usr/bin/env bash
# Proves the README's two commands on a fresh Debian 12: builds a minimal
# bookworm root with debootstrap, copies this checkout's HEAD commit (what a
# clone gets, as CI runs it) and ../shared into it, and runs
# scripts/run-example.sh then scripts/test.sh there, in a chroot, with
# nothing else installed.
# The Debian mirror is the one this machine's apt already uses; nothing about
# it is kept in the repository. Prints the time each step took. Needs root.
#
# usage: scripts/check-fresh-install.sh [--keep] [DIR]
#   DIR     an empty directory to build the root in (default: a new temporary
#           one, removed afterwards)
#   --keep  leave the root in place afterwards, to look around in it
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
if [[ ${1:-} == --keep ]]; then keep=1; shift; fi
[[ $(id -u) -eq 0 ]] || { echo "check-fresh-install: needs root (debootstrap, chroot)" >&2; exit 2; }
[[ -d ../shared ]] || { echo "check-fresh-install: no ../shared beside the checkout" >&2; exit 2; }

# The mirrors apt resolves bookworm and its security updates from.
mirror=$(apt-cache policy | awk '$3 == "bookworm/main" { print $2; exit }')
security=$(apt-cache policy | awk '$3 == "bookworm-security/main" { print $2; exit }')
[[ -n $mirror ]] || { echo "check-fresh-install: no bookworm mirror in apt's sources" >&2; exit 2; }

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

if [[ -n ${1:-} ]]; then
  root=$1
  [[ ! -e $root || -z $(ls -A "$root") ]] || { echo "check-fresh-install: $root is not empty" >&2; exit 2; }
  keep=1  # the caller's directory stays
else
  root=$(mktemp -d /var/tmp/tpusim-fresh.XXXXXX)
fi
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  if [[ $keep == 0 ]]; then rm -rf --one-file-system "$root"; else echo "root kept in $root"; fi
}
trap cleanup EXIT

step_start=$SECONDS
# step NAME COMMAND...: runs COMMAND and reports its wall time.
step() {
  local name=$1 t0=$SECONDS
  shift
  echo "== $name"
  "$@"
  printf '== %s: %dm%02ds\n' "$name" $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60))
}

bootstrap() {
  local log
  log=$(mktemp)
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$log" 2>&1 ||
    { tail -n 20 "$log" >&2; rm -f "$log"; return 1; }
  rm -f "$log"
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    [[ -z $security ]] || echo "deb $security bookworm-security main"
  } >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # The CAs this machine trusts, for npm to reach its registry through this
  # machine's network (which may re-sign TLS); like the mirror, a property of
  # the network, not of the project. Node reads it as NODE_EXTRA_CA_CERTS.
  mkdir -p "$root/etc/ssl"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/host-ca.crt"
}

copy_checkout() {
  mkdir -p "$root/work/main"
  git archive HEAD | tar -C "$root/work/main" -xf -
  cp -a ../shared "$root/work/shared"
}

mount_pseudo_filesystems() {
  mount -t proc proc "$root/proc" && mounts+=("$root/proc")
  mount -t sysfs sys "$root/sys" && mounts+=("$root/sys")
  mount --bind /dev "$root/dev" && mounts+=("$root/dev")
  mount --bind /dev/pts "$root/dev/pts" && mounts+=("$root/dev/pts")
  mount -t tmpfs tmpfs "$root/tmp" && mounts+=("$root/tmp")
}

# in_root COMMAND: runs COMMAND in the checkout inside the root, with a clean
# environment as a new user's login shell would have.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    NODE_EXTRA_CA_CERTS=/etc/ssl/host-ca.crt \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /work/main && $1"
}

step "debootstrap bookworm from $mirror" bootstrap
copy_checkout
mount_pseudo_filesystems
step "scripts/run-example.sh" in_root scripts/run-example.sh
step "scripts/test.sh" in_root scripts/test.sh
printf '== all passed on a fresh Debian 12 root in %dm%02ds\n' \
  $(((SECONDS - step_start) / 60)) $(((SECONDS - step_start) % 60))
