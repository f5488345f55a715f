#!/usr/bin/env bash
# Issue 16's remaining benchmark runs, in order, each a resumable qa/sweep.sh
# (a repeat whose results.json exists is skipped), all under one --stop-by:
#
#   qa/plans/issue16.sh HH:MM [RESULTS_ROOT]
#
# run as root on a machine with the Ceph build (qa/setup.sh), from a clone
# that is not being edited (the runs record its commit); nothing else heavy
# beside it. RESULTS_ROOT (/var/tmp) keeps one directory per sweep; copy a
# finished one into docs/results/ with its README. A sweep that stops at
# HH:MM leaves the later ones unstarted; run the same command again in the
# next session. Times are for this project's 2-core machine. A directory
# whose runs come from another machine is refused (qa/machine.py): on a new
# machine, move the unfinished ones aside and start their tables again.
set -uo pipefail
QA=$(cd "$(dirname "$0")/.." && pwd)
stop=${1:?usage: $0 HH:MM [RESULTS_ROOT]}
root=${2:-/var/tmp}
sweep() { "$QA/sweep.sh" --repeat 3 --runtime 120 --distribution uniform --stop-by "$stop" "$@" || echo "sweep failed: $*" >&2; }

# A machine whose RESULTS_ROOT was emptied (a new /var/tmp) still has every
# finished repeat in docs/results/: a sweep directory that is missing starts
# from its committed copy, so only the repeats not yet made run (sweep.sh
# skips a repeat with a results.json, and refuses a copy made on another
# machine). An existing directory is never touched.
seed() {  # seed SWEEP_DIR_NAME COMMITTED_DIR_NAME
  local from=$QA/../docs/results/$2 to=$root/$1
  if [[ ! -e $to && -d $from ]]; then
    cp -a "$from" "$to" && echo "seeded $to from docs/results/$2"
  fi
}
seed i16-repl-8G-b 20261128-i16-repl-8G-b
seed i16-readback-8G 20261129-i16-readback-8G
seed i16-mixes-16G-hdd32G-osdmem2G 20261129-i16-mixes-16G-hdd32G-osdmem2G
seed i16-mixes64k-16G-hdd32G-osdmem2G 20261129-i16-mixes64k-16G-hdd32G-osdmem2G
seed i16-reads-16G-hdd20G-osdmem2G 20261129-i16-reads-16G-hdd20G-osdmem2G
seed i16-fs-4G-osdmem2G 20261129-i16-fs-4G-osdmem2G
seed i16-writes-hdd2x 20261129-i16-writes-hdd2x
seed i16-writes-16G-hdd2x-600s 20261129-i16-writes-16G-hdd2x-600s
seed i16-writes-64G-hdd2x-600s 20261202-i16-writes-64G-hdd2x-600s
seed i16-readback-8G-batch64 20261202-i16-readback-8G-batch64

# 1. Replicated: 3 OSDs, pool size 2 (~60 min each). Repeats 1-2 of
#    20261128-i16-repl-8G were made on another machine, where mimstore was
#    CPU-bound at 811 IOPS (1,925 here): this machine's three make their own
#    table (sweep.sh refuses to mix machines in one directory)
#    Its repeats ran with the host's page-cache reclaim on (before bench.sh
#    paused it): the rest of the table too (sweep.sh refuses a mix)
sweep --points 8G:2G --warmup 60 --results "$root/i16-repl-8G-b" \
  -- --osds 3 --pool-size 2 --rw randwrite,randrw:50 --size 4k,8k --hdd-size 16G --host-reclaim keep
# 2. Read-after-write in the merge window, on an image that no store
#    writes a whole pass of within warm-up + window: at the end of each
#    pass over the image fio verifies every write its backlog left
#    unverified (137,280 and 115,288 reads in the 2 GiB table, which only
#    mimstore reached: 20261128-i16-readback-probe). 8 GiB is 2,097,152
#    blocks, 262 s at mimstore's best 8,000 writes/s; 2,048 objects still
#    fit the 4,096 slots of one merge generation. ~25 min each
sweep --points 8G:4G --runtime 180 --warmup 60 --results "$root/i16-readback-8G" \
  -- --rw readback
# 3. Random reads and mixes, 4 KiB, as 20261128-i16-mixes-16G-hdd32G but
#    with the host's page-cache reclaim paused and each OSD's memory
#    bounded alike (2 GiB: BlueStore's osd_memory_target 1.5 GiB, the
#    page-cache stores' page cache within the same cgroup): that table's
#    one loss (random reads 0.83x BlueStore) was measured with the reclaim
#    dropping the page-cache stores' data a minute after use. ~50 min each
sweep --points 16G:4G --warmup 60 --results "$root/i16-mixes-16G-hdd32G-osdmem2G" \
  -- --rw randread,randrw:50,randrw:33 --size 4k --hdd-size 32G --osd-mem 2G
# 4. 64 KiB random reads and mixes on a half-full disk, memory bounded as
#    in 3 (~53 min); before the filesystem workloads' repeats: never
#    measured, one of the issue's deliverables. One repeat: not a headline
#    point, and the 4 KiB table's three repeats differed by 2 % or less
#    in every ratio (20261128-i16-mixes-16G-hdd32G)
sweep --repeat 1 --points 16G:4G --warmup 60 --results "$root/i16-mixes64k-16G-hdd32G-osdmem2G" \
  -- --rw randread,randrw:50,randrw:33 --size 64k --hdd-size 32G --osd-mem 2G
# 4b. The one loss, random reads at 0.82x BlueStore-hybrid on the half-full
#    disk, traced to XFS spreading the object files over its four
#    allocation groups (the whole stroke) where BlueStore packs the image
#    at the disk's start (half of it). On a disk 80 % full (the fullest
#    bench.sh allows: 20 GiB for 16), as an OSD in service is, both span
#    most of the stroke: does the loss stay? 4 KiB reads and the 50/50 mix,
#    memory bounded as in 3; one repeat (3's agreed within 1 %), ~41 min
sweep --repeat 1 --points 16G:4G --warmup 60 --results "$root/i16-reads-16G-hdd20G-osdmem2G" \
  -- --rw randread,randrw:50 --size 4k --hdd-size 20G --osd-mem 2G
# 5. Filesystem workloads, the OSDs' memory bounded alike (2 GiB each:
#    BlueStore's osd_memory_target 1.5 GiB; the page-cache stores' object
#    cache within the same 2 GiB), so no store reads from this host's 24 GiB;
#    ~75 min each
sweep --points 4G:4G --warmup 300 --results "$root/i16-fs-4G-osdmem2G" \
  -- --rw varmail,fileserver --hdd-size 8G --osd-mem 2G
# 6. Random writes on disks sized to the data (half full), the sweep's
#    points; against the 1 TiB disks of 20261126-sweep
sweep --points 2G:4G,16G:4G,64G:1G --warmup 60 --results "$root/i16-writes-hdd2x" \
  -- --rw randwrite --size 4k --hdd-size 2x
# 8. The 16 GiB sized-disk point of 6 over a window of 3 or more merge
#    flushes: at 120 s mimstore completed 1, 0 and 0 (writing a 16 GiB
#    generation back takes ~150 s on the half-full disk;
#    docs/results/20261129-i16-writes-hdd2x). 600 s, as 20261126-sweep's
#    16 GiB point on the 1 TiB disk; 51 min each (measured)
sweep --points 16G:4G --warmup 60 --runtime 600 --results "$root/i16-writes-16G-hdd2x-600s" \
  -- --rw randwrite --size 4k --hdd-size 2x
# 9. The 64 GiB / 1 GiB journal point of 6 over 600 s: at 120 s mimstore
#    completed one merge flush per window (not steady state; 4.53x
#    BlueStore-hybrid in 20261129-i16-writes-hdd2x). One repeat first
#    (~55 min: 22 min at 120 s plus 8 min more per profile); more if it
#    differs from the 120 s figure
sweep --repeat 1 --points 64G:1G --warmup 60 --runtime 600 --results "$root/i16-writes-64G-hdd2x-600s" \
  -- --rw randwrite --size 4k --hdd-size 2x
# 7. (run last: it is the longest, and 8-9 close the random-write tables)
#    Read-after-write again, 8 GiB, with fio's verify batched so that
#    every write is read back (bench.sh readback's --verify_backlog_batch
#    since 2026-11-29: 1.000 reads per write against 0.58-0.70 in
#    20261129-i16-readback-8G, docs/results/validation/
#    20261129-readback-verify-batch), and a longer window: that table had
#    2 flush cycles in 180 s and mimstore still settling (6,200 -> 4,200
#    IOPS). 120 + 300 s: 4 or more cycles; ~43 min each
sweep --points 8G:4G --warmup 120 --runtime 300 --results "$root/i16-readback-8G-batch64" \
  -- --rw readback
