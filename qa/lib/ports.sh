# shellcheck shell=bash
# qa/lib/ports.sh - a free TCP port pair for a test cluster's monitor.
# Sourced by qa/lib/cluster.sh and qa/lib/dev-cluster.sh.

# free_port_pair: print p such that p and p+1 have no socket now, p in
# 20000..31998: below Linux's ephemeral range (32768-60999 by default),
# where any outgoing connection may take a port between our check and the
# monitor's bind ("Address already in use").
free_port_pair() {
  local p lo
  lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  ((lo > 20100)) || lo=61000   # an unusual ephemeral range: no gap below it
  for _ in $(seq 100); do
    p=$((20000 + (RANDOM % ((lo - 20002) / 2)) * 2))
    if ! ss -Htan "( sport = :$p or sport = :$((p + 1)) )" | grep -q .; then
      echo "$p"
      return 0
    fi
  done
  return 1
}
