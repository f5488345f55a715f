#!/usr/bin/env bash
# ceph-objectstore-tool on mimstore, as an operator uses it to move or
# rescue a PG: a vstart cluster of one BlueStore OSD (osd.0) and one
# mimstore OSD (osd.1, added as an operator adds one, with CRUSH weight 0
# so that nothing maps to it until the test says), a pool of one PG of
# size 1, objects with data of several sizes, xattrs, omap and omap
# headers, and a pool snapshot with an object overwritten after it (a
# clone). Each step is checked:
#   1. BlueStore -> mimstore: both OSDs stopped, `--op info` and
#      `--op export-remove` of the PG on osd.0, `--op import` into osd.1;
#      `--op list-pgs`, `--op list`, `--op info` (the same last_update) and
#      `--op fsck`, `--op fsck-deep` on osd.1; CRUSH then maps the PG to
#      osd.1 and every object reads back identical through librados (data,
#      xattrs, omap, headers, the snapshot's clone), served by mimstore.
#   2. mimstore -> BlueStore: the same the other way; identical again.
#   3. refusals on mimstore: no journal given (`--journal-path` missing) is
#      a clear error, and `--op import` of a PG the store already holds is
#      refused without touching it.
#   4. repair: each class of error fsck finds, injected one at a time into
#      the mimstore OSD: a stray file (repair quarantines it), an object
#      file removed by hand (repair removes its orphan omap), an object in
#      two collections (repair leaves it and says so).
#
#   qa/objectstore-tool.sh        (a Ceph build; no root needed)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
source "$REPO/cmake/common.sh"
source "$REPO/qa/lib/dev-cluster.sh"

trap 'dev_cluster_stop $?' EXIT
trap 'exit 130' INT TERM

# No mClock benchmark at start: it is not what this test is about, and its
# writes only make the start slower.
DEV_STORE=bluestore dev_cluster_start 1 true "osd mclock skip benchmark = true"
POOL=cot
dev_pool_create $POOL 1 1
PGID="$($CEPH osd pool ls detail -f json | /usr/bin/python3 -c \
  'import json,sys; print([p["pool_id"] for p in json.load(sys.stdin) if p["pool_name"] == sys.argv[1]][0])' $POOL).0"
MANIFEST=$DEV_DEST/manifest.json
EXPORT=$DEV_DEST/pg.export
OSD1=$DEV_DEST/dev/osd1

reef_py() {
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" PYTHONPATH="$CEPH_BUILD_DIR/lib/cython_modules/lib.3" \
    /usr/bin/python3 "$@"
}
json_get() {  # json_get PYTHON-EXPRESSION-ON-d: stdin's JSON, one value
  /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}

# ---- the objects ----------------------------------------------------------------
log "writing objects to pool $POOL (PG $PGID on osd.0, BlueStore)"
reef_py - "$CEPH_CONF" $POOL "$MANIFEST" <<'EOF'
import json, random, sys, rados
conf, pool, manifest = sys.argv[1:4]
c = rados.Rados(conffile=conf); c.connect(); io = c.open_ioctx(pool)
rnd = random.Random(63)
sizes = [0, 1, 4095, 4096, 65537, 1 << 20, (4 << 20) - 512]
names = []
for i, size in enumerate(sizes * 3):
    name = "obj-%02d-%d" % (i, size)
    io.write_full(name, rnd.randbytes(size))
    for k in range(i % 4):
        io.set_xattr(name, "user.x%d" % k, rnd.randbytes(1 + 37 * k))
    if i % 3:
        n = 1 + 20 * (i % 5)
        with rados.WriteOpCtx() as op:
            io.set_omap(op, tuple("k%04d" % j for j in range(n)),
                        tuple(rnd.randbytes(j % 300) for j in range(n)))
            io.operate_write_op(op, name)
    names.append(name)
io.remove_object("probe")
json.dump({"names": names, "headers": names[1::5]}, open(manifest, "w"))
print("%d objects" % len(names))
EOF
for o in $(json_get '" ".join(d["headers"])' <"$MANIFEST"); do
  $RADOS -p $POOL setomapheader "$o" "header of $o"
done
# a pool snapshot, then one object overwritten: the PG holds a clone of it
$RADOS -p $POOL mksnap before >/dev/null
head -c 18000 /dev/urandom >"$DEV_DEST/after"
$RADOS -p $POOL put obj-04-65537 "$DEV_DEST/after"

# digest FILE: every object's data, xattrs, omap and omap header, and the
# snapshot's view of the overwritten object, as JSON (sha256 of each part)
digest() {
  reef_py - "$CEPH_CONF" $POOL "$MANIFEST" "$1" "$BIN/rados" <<'EOF'
import hashlib, json, os, subprocess, sys, rados
conf, pool, manifest, out, rados_bin = sys.argv[1:6]
h = lambda b: hashlib.sha256(b or b"").hexdigest()   # librados gives None for an empty value
c = rados.Rados(conffile=conf); c.connect(); io = c.open_ioctx(pool)
m = json.load(open(manifest))
d = {}
for name in m["names"]:
    size, _ = io.stat(name)
    data = io.read(name, size + 1) if size else b""
    with rados.ReadOpCtx() as op:
        it, _ = io.get_omap_vals(op, "", "", 100000)
        io.operate_read_op(op, name)
        omap = {k: h(v) for k, v in it}
    d[name] = {"size": size, "data": h(data),
               "xattrs": {k: h(v) for k, v in io.get_xattrs(name)}, "omap": omap}
for name in m["headers"]:
    d[name]["header"] = h(subprocess.run(
        [rados_bin, "-c", conf, "-p", pool, "getomapheader", name],
        check=True, capture_output=True, env=dict(os.environ)).stdout)
io.set_read([s for s in io.list_snaps() if s.name == "before"][0].snap_id)
d["snap:obj-04-65537"] = h(io.read("obj-04-65537", 1 << 20))
json.dump(d, open(out, "w"), indent=1, sort_keys=True)
print("%d objects and a clone digested" % len(m["names"]))
EOF
}
digest "$DEV_DEST/digest-written.json"

# ---- osd.1: a mimstore OSD, added as an operator adds one -------------------------
log "adding osd.1, a mimstore OSD (CRUSH weight 0: nothing maps to it yet)"
# After vstart's [osd] section: this OSD's own store, journal inside its
# data directory (a file, as in the other dev clusters)
cat >>"$CEPH_CONF" <<EOF
[osd.1]
        host = $(hostname -s)
        osd objectstore = mimstore
        osd crush initial weight = 0
EOF
mkdir -p "$OSD1"
uuid=$(uuidgen)
secret=$("$BIN/ceph-authtool" --gen-print-key)
echo "{\"cephx_secret\": \"$secret\"}" >"$DEV_DEST/new.json"
id=$($CEPH osd new "$uuid" -i "$DEV_DEST/new.json")
[ "$id" = 1 ] || die "ceph osd new gave osd.$id, expected osd.1"
(cd "$CEPH_BUILD_DIR" && LD_LIBRARY_PATH=$CEPH_BUILD_DIR/lib \
   "$BIN/ceph-osd" -i 1 -c "$CEPH_CONF" --mkfs --key "$secret" --osd-uuid "$uuid") \
  >"$DEV_DEST/osd1-mkfs.log" 2>&1 || { tail "$DEV_DEST/osd1-mkfs.log" >&2; die "mkfs of osd.1 failed"; }
printf '[osd.1]\n\tkey = %s\n' "$secret" >"$OSD1/keyring"
dev_osd_start 1
dev_wait_up 2 120 || die "osd.1 did not come up"
store=$($CEPH osd metadata 1 -f json | json_get 'd["osd_objectstore"]')
[ "$store" = mimstore ] || die "osd.1 runs $store, expected mimstore"
$CEPH osd set noout >/dev/null

# ---- helpers ------------------------------------------------------------------
cot() {  # cot OSD ARGS...: ceph-objectstore-tool on a stopped OSD of this cluster
  local osd=$1; shift
  local store=(--data-path "$DEV_DEST/dev/osd$osd")
  [ "$osd" = 1 ] && store+=(--journal-path "$OSD1/journal")
  env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph-objectstore-tool" --conf="$CEPH_CONF" \
    --no-mon-config "${store[@]}" "$@"
}
acting() { $CEPH pg map "$PGID" -f json | json_get '",".join(map(str, d["acting"]))'; }
pg_state() {
  $CEPH pg ls-by-pool $POOL -f json | json_get '(d["pg_stats"] if isinstance(d, dict) else d)[0]["state"]'
}
# wait_pg OSD: the PG active+clean on OSD alone
wait_pg() {
  local t=0 a s
  while :; do
    a=$(acting 2>/dev/null || true); s=$(pg_state 2>/dev/null || true)
    [ "$a" = "$1" ] && [ "$s" = active+clean ] && return 0
    [ $t -ge 180 ] && die "PG $PGID: acting [$a], $s after 180 s (expected [$1], active+clean)"
    sleep 2; t=$((t + 2))
  done
}
same_digest() {  # same_digest NAME: librados' view equals what was written
  digest "$DEV_DEST/digest-$1.json"
  cmp -s "$DEV_DEST/digest-written.json" "$DEV_DEST/digest-$1.json" || {
    diff "$DEV_DEST/digest-written.json" "$DEV_DEST/digest-$1.json" | head -20 >&2
    die "$1: the objects do not read back as written (diff above)"
  }
  log "  $1: every object, its xattrs, omap, header and the clone read back identical"
}
last_update() { json_get 'd.get("info", d)["last_update"]'; }

# move FROM TO: the PG exported from FROM's store (removed there) and
# imported into TO's, as a PG is moved by hand between two stopped OSDs;
# then CRUSH maps it to TO, and the cluster serves it from there
move() {
  local from=$1 to=$2 lu_from lu_to n
  log "moving PG $PGID from osd.$from ($($CEPH osd metadata "$from" -f json | json_get 'd["osd_objectstore"]')) to osd.$to"
  # the source first: the target then has seen every map the PG has
  dev_osd_stop "$from"; dev_osd_stop "$to"
  lu_from=$(cot "$from" --op info --pgid "$PGID" | last_update)
  rm -f "$EXPORT"
  cot "$from" --op export-remove --pgid "$PGID" --file "$EXPORT" >/dev/null
  cot "$from" --op list-pgs | grep -x "$PGID" >/dev/null && die "export-remove left PG $PGID on osd.$from"
  cot "$to" --op import --file "$EXPORT" >/dev/null
  cot "$to" --op list-pgs | grep -x "$PGID" >/dev/null || die "PG $PGID not listed on osd.$to after import"
  lu_to=$(cot "$to" --op info --pgid "$PGID" | last_update)
  [ "$lu_from" = "$lu_to" ] || die "last_update $lu_to on osd.$to, $lu_from on osd.$from"
  # --op list: a line per object, heads and the clone
  n=$(cot "$to" --op list --pgid "$PGID" | /usr/bin/python3 -c '
import json, sys
names = set(json.load(open(sys.argv[1]))["names"])
# the PG meta object (an empty name) is listed too
objs = [o for o in (json.loads(l)[1] for l in sys.stdin if l.strip()) if o["oid"]]
heads = {o["oid"] for o in objs if o["snapid"] == -2}
clones = [o for o in objs if o["snapid"] not in (-2, -1)]
if heads != names or [o["oid"] for o in clones] != ["obj-04-65537"]:
    sys.exit("--op list: %d heads (%d expected), clones %s" % (len(heads), len(names), clones))
print(len(objs))' "$MANIFEST")
  log "  export-remove, import: last_update $lu_to on both; --op list: $n objects (heads and the clone)"
  if [ "$to" = 1 ]; then
    cot 1 --op fsck >/dev/null || die "fsck of osd.1 after the import found errors"
    cot 1 --op fsck-deep >/dev/null || die "deep fsck of osd.1 after the import found errors"
    log "  fsck and fsck-deep of osd.1 (mimstore): clean"
  fi
  $CEPH osd crush reweight "osd.$to" 1 >/dev/null
  $CEPH osd crush reweight "osd.$from" 0 >/dev/null
  dev_osd_start "$from"; dev_osd_start "$to"
  dev_wait_up 2 120 || die "the OSDs did not come back"
  wait_pg "$to"
}

move 0 1
same_digest mimstore
move 1 0
same_digest bluestore-again

# ---- refusals -------------------------------------------------------------------
log "refusals on the mimstore OSD"
# the PG went back to osd.0: both stopped, osd.0 first (it exports below)
dev_osd_stop 0
dev_osd_stop 1
out=$(env LD_LIBRARY_PATH="$CEPH_BUILD_DIR/lib" "$BIN/ceph-objectstore-tool" --conf="$CEPH_CONF" \
        --no-mon-config --data-path "$OSD1" --op list-pgs 2>&1) &&
  die "the tool ran on mimstore without a journal: $out"
echo "$out" | grep "mimstore needs a journal" >/dev/null ||
  die "no journal: not the store's message: $(echo "$out" | tail -n 3)"
log "  without --journal-path: $(echo "$out" | grep -m1 'mimstore needs a journal' | sed 's/^.*mimstore needs/mimstore needs/')"
# import it into osd.1 too, then once more
cot 0 --op export --pgid "$PGID" --file "$EXPORT.2" >/dev/null
cot 1 --op import --file "$EXPORT.2" >/dev/null
before=$(cot 1 --op list --pgid "$PGID" | sha256sum)
out=$(cot 1 --op import --file "$EXPORT.2" 2>&1) && die "a second import of PG $PGID was accepted: $out"
echo "$out" | grep "already exists" >/dev/null || die "second import: $(echo "$out" | tail -n 2)"
[ "$(cot 1 --op list --pgid "$PGID" | sha256sum)" = "$before" ] ||
  die "the refused import changed the PG on osd.1"
cot 1 --op fsck >/dev/null || die "fsck of osd.1 failed after the refused import"
log "  a second import of the same PG: refused (already exists), the store unchanged and clean"

# ---- repair ---------------------------------------------------------------------
# Each class of error fsck finds, injected into osd.1's copy of the PG one
# at a time: fsck fails, --op repair mends what the store can mend alone
# and says what it leaves, fsck is clean after.
log "repair on the mimstore OSD, one injected error at a time"
coll=$OSD1/objects/${PGID}_head
[ -d "$coll" ] || die "no collection directory $coll"
objfile() { find "$coll" -maxdepth 1 -type f -name "*$1*" -print -quit; }
# a stray file: quarantined, kept
echo stray >"$coll/not-an-object"
out=$(cot 1 --op fsck 2>&1) && die "fsck passed a stray file: $out"
out=$(cot 1 --op repair 2>&1) || die "repair of a stray file failed: $(echo "$out" | tail -n 2)"
[ -e "$coll/not-an-object" ] && die "repair left the stray file in $coll"
[ "$(cat "$OSD1/mimstore-quarantine/${PGID}_head/not-an-object")" = stray ] ||
  die "the stray file is not in $OSD1/mimstore-quarantine/${PGID}_head"
cot 1 --op fsck >/dev/null 2>&1 || die "fsck fails after repairing a stray file"
log "  stray file: fsck fails, repair moves it to mimstore-quarantine/, fsck clean"
# an object file removed by hand: its omap and xattrs are orphans, removed
f=$(objfile obj-02-4095)
[ -n "$f" ] || die "no file of obj-02-4095 in $coll"
rm -f "$f"
out=$(cot 1 --op fsck 2>&1) && die "fsck passed orphan omap: $out"
out=$(cot 1 --op repair-deep 2>&1) || die "repair of orphan omap failed: $(echo "$out" | tail -n 2)"
cot 1 --op fsck-deep >/dev/null 2>&1 || die "fsck-deep fails after repairing orphan omap"
log "  orphan omap (object file removed): fsck fails, repair-deep removes it, fsck-deep clean"
# an object in two collections: not the store's to decide; left, said
f=$(objfile obj-05-1048576)
[ -n "$f" ] || die "no file of obj-05-1048576 in $coll"
ln "$f" "$OSD1/objects/meta/"
out=$(cot 1 --op fsck 2>&1) && die "fsck passed an object in two collections: $out"
out=$(cot 1 --op repair 2>&1) && die "repair claimed to mend an object in two collections: $out"
echo "$out" | grep "repair status: 1 remaining" >/dev/null || die "repair of an object in two collections: $(echo "$out" | tail -n 2)"
rm -f "$OSD1/objects/meta/$(basename "$f")"
cot 1 --op fsck >/dev/null 2>&1 || die "fsck fails after the second name went"
log "  object in two collections: repair leaves it (1 remaining error), fsck clean once the extra name goes"
log "PASS"
