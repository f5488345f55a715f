# shellcheck shell=bash
# qa/lib/clients.sh - which client tools (ceph, rados, rbd and fio's rbd
# engine) a script's commands reach for a cluster. Sourced.
#
# Debian 12's client tools link Pacific's librados and librbd. They talk to
# Debian's Pacific cluster (the FileStore comparator) and to one of the
# Reef build, but not to a new cluster of the Tentacle build: Tentacle
# makes CephX keys of a new type (aes256k; the keyring's keys start "Ag")
# and its monitors allow only that cipher, so Pacific cannot even read the
# keyring ("error parsing file ... Malformed input", then "couldn't connect
# to the cluster"). A build that makes its own
# rbd (CEPH_TARGETS adds it for every release after Reef) is talked to with
# its own clients: wrapper scripts, first on PATH so that `timeout rbd ...`
# and child processes find them too, run the build's ceph, rados and rbd,
# and Debian's fio and rbd-fuse on the build's librbd.
#
#   clients_for debian                 Debian's tools (a Pacific cluster)
#   clients_for build BUILD_DIR SRC    the build's, if it has bin/rbd

CLIENTS_DIR=

clients_for() {
  local kind=$1 p
  # Take a previous choice's wrappers off PATH.
  if [[ -n $CLIENTS_DIR ]]; then
    p=":$PATH:"
    p=${p//:$CLIENTS_DIR:/:}
    p=${p#:}
    PATH=${p%:}
    CLIENTS_DIR=
  fi
  [[ $kind == build ]] || return 0
  local b=$2 s=$3 t
  if [[ ! -x $b/bin/rbd ]]; then
    [[ ${MIMSTORE_CEPH_RELEASE:-} == reef ]] && return 0
    echo "no rbd in $b/bin: this release's cluster needs its own clients (cmake/ceph-build.sh builds it)" >&2
    return 1
  fi
  CLIENTS_DIR=$b/mimstore-clients
  mkdir -p "$CLIENTS_DIR"
  for t in ceph rados rbd fio rbd-fuse; do
    local exe=$b/bin/$t
    [[ $t == fio || $t == rbd-fuse ]] && exe=/usr/bin/$t
    cat >"$CLIENTS_DIR/$t.new" <<EOF
#!/bin/sh
# Written by qa/lib/clients.sh: $t for a cluster of the build in $b.
export LD_LIBRARY_PATH=$b/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PYTHONPATH=$s/src/pybind:$b/lib/cython_modules/lib.3:$s/src/python-common
exec $exe "\$@"
EOF
    chmod +x "$CLIENTS_DIR/$t.new"
    mv -f "$CLIENTS_DIR/$t.new" "$CLIENTS_DIR/$t"
  done
  PATH=$CLIENTS_DIR:$PATH
}
