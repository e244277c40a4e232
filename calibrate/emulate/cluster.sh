#!/bin/sh
# cluster.sh — an emulated cluster on one machine: K "nodes" = network namespaces joined through a
# Linux bridge, each node's link rate-limited by htb (both directions), plus an rsh agent that lets
# mpirun start its daemons inside a node with the node's own hostname. What works on this kernel
# and why (no netem: latency is what the stack gives): /work/shared/reference/emulated-cluster.md.
# Not here: any measurement (calibrate/emulate/run.sh runs shardcast calibrate across it).
#
#   cluster.sh up [-k K] [-r RATE]     create K nodes (default 2) at RATE (default 1gbit, tc syntax)
#   cluster.sh down                    remove what `up` created (namespaces, veths, bridge, state)
#   cluster.sh exec [-k K] [-r RATE] -- CMD [ARG...]
#                                      up, run CMD with the cluster's variables in its environment,
#                                      down on exit, failure or signal; exits with CMD's status
#   cluster.sh status                  what exists now
#   cluster.sh env                     the variables of the running cluster (for sh: . or eval)
#
# Environment: SCEMU_PREFIX (default scemu: names scemu-n0.., scemu-br, scemu-v0..) and SCEMU_NET
# (default 10.77.0: node i is SCEMU_NET.(i+1)/24, the bridge .254). CMD sees SCEMU_AGENT (the rsh
# agent for --mca plm_rsh_agent), SCEMU_HOSTS (node addresses, comma-separated), SCEMU_SUBNET
# (e.g. 10.77.0.0/24), SCEMU_NODES, SCEMU_RATE, SCEMU_STATE (the state directory).
# Exit status: 0 ok, 1 failure (a tool missing: make deps), 2 usage, 77 skipped (network namespaces
# not permitted here: not root, or ip netns add refused).
set -u

PREFIX=${SCEMU_PREFIX:-scemu}
NET=${SCEMU_NET:-10.77.0}
STATE=${SCEMU_STATE_DIR:-/run/$PREFIX}
[ -d /run ] && [ -w /run ] || STATE=${TMPDIR:-/tmp}/$PREFIX
BR="$PREFIX-br"
GW="$NET.254"

say() { printf 'cluster.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

usage() {
    sed -n '7,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# ---- checks -----------------------------------------------------------------------------
need_tools() {
    for t in ip tc unshare; do
        if ! command -v "$t" >/dev/null 2>&1; then
            # a missing tool is not a refusal: make deps installs iproute2 (ip, tc)
            echo "FAIL: '$t' not found: run 'make deps' (installs iproute2; unshare is util-linux)" >&2
            exit 1
        fi
    done
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: network namespaces not permitted: not root (uid $(id -u))"
        exit 77
    fi
    # the probe: create and delete one namespace; a refusal here means no emulated cluster
    probe="$PREFIX-probe$$"
    if ! out=$(ip netns add "$probe" 2>&1); then
        echo "SKIP: network namespaces not permitted: ip netns add: $out"
        exit 77
    fi
    ip netns del "$probe" 2>/dev/null
}

check_args() {
    case $K in '' | *[!0-9]*) say "-k: expected a node count from 1 to 200, got '$K'"; exit 2 ;; esac
    [ "$K" -ge 1 ] && [ "$K" -le 200 ] || { say "-k: expected a node count from 1 to 200, got '$K'"; exit 2; }
    case $RATE in *[!0-9a-zA-Z.]* | '') say "-r: expected a tc rate such as 1gbit or 500mbit, got '$RATE'"; exit 2 ;; esac
    # interface names: at most 15 characters ("<prefix>-v199" is prefix + 5)
    [ ${#PREFIX} -le 10 ] || { say "SCEMU_PREFIX: expected at most 10 characters, got '$PREFIX'"; exit 2; }
}

# ---- teardown ---------------------------------------------------------------------------
# Everything named after the prefix, whoever made it (also a run killed before its trap).
down() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX-n[0-9][0-9]*\$"); do
        # processes left inside a node (an orted that outlived mpirun) would keep it alive
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    for v in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$PREFIX-v[0-9][0-9]*\$"); do
        ip link del "$v" 2>/dev/null
    done
    if ip link show "$BR" >/dev/null 2>&1; then
        ip link del "$BR" 2>/dev/null
    fi
    rm -rf "$STATE"
}

# A cluster with this prefix exists: its owner alive means it is in use (refuse); dead means a
# run that could not clean up (SIGKILL, power): remove it.
reclaim_stale() {
    exists=""
    ip link show "$BR" >/dev/null 2>&1 && exists=1
    ip netns list 2>/dev/null | grep -q "^$PREFIX-n[0-9]" && exists=1
    [ -n "$exists" ] || return 0
    owner=$(cat "$STATE/owner" 2>/dev/null || true)
    if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then
        die "an emulated cluster '$PREFIX' is in use (owner pid $owner); set SCEMU_PREFIX and SCEMU_NET for another"
    fi
    say "removing a stale cluster '$PREFIX' (owner ${owner:-unknown} is gone)"
    down
}

# ---- creation ---------------------------------------------------------------------------
# htb on an interface: all traffic into one class limited to RATE (ceil = rate: no borrowing).
limit() { # netns-or-empty dev
    if [ -n "$1" ]; then x="ip netns exec $1"; else x=""; fi
    $x tc qdisc add dev "$2" root handle 1: htb default 10 &&
        $x tc class add dev "$2" parent 1: classid 1:10 htb rate "$RATE" ceil "$RATE" quantum 60000
}

write_agent() {
    agent="$STATE/rsh-agent"
    {
        echo '#!/bin/sh'
        echo "# rsh agent of the emulated cluster '$PREFIX' (written by calibrate/emulate/cluster.sh):"
        echo '# mpirun calls it as "AGENT [ssh options] HOST COMMAND..."; it runs COMMAND inside the'
        echo "# node's network namespace with the node's own hostname (unshare --uts), without which"
        echo '# OpenMPI takes every rank for one host and its shared-memory transport breaks.'
        echo 'while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done'
        echo '[ $# -ge 2 ] || { echo "rsh-agent: usage: rsh-agent HOST COMMAND..." >&2; exit 255; }'
        echo 'host=$1; shift'
        echo 'case $host in'
        i=0
        while [ "$i" -lt "$K" ]; do
            echo "    $NET.$((i + 1)) | $PREFIX-n$i) ns=$PREFIX-n$i ;;"
            i=$((i + 1))
        done
        echo '    *) echo "rsh-agent: unknown node $host" >&2; exit 255 ;;'
        echo 'esac'
        echo 'exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns; $*"'
    } >"$agent.tmp" && chmod 755 "$agent.tmp" && mv "$agent.tmp" "$agent"
}

up() {
    need_tools
    check_args
    reclaim_stale
    mkdir -p "$STATE" || die "cannot create $STATE"
    echo "${OWNER:-$PPID}" >"$STATE/owner"
    # a failure half-way leaves nothing behind
    ok=""
    trap '[ -n "$ok" ] || { say "creation failed: removing what was made"; down; }' EXIT
    trap 'exit 1' INT TERM HUP
    ip link add "$BR" type bridge || die "cannot create bridge $BR"
    ip addr add "$GW/24" dev "$BR" || die "cannot address $BR"
    ip link set "$BR" up || die "cannot bring $BR up"
    hosts=""
    i=0
    while [ "$i" -lt "$K" ]; do
        ns="$PREFIX-n$i" v="$PREFIX-v$i" addr="$NET.$((i + 1))"
        ip netns add "$ns" || die "ip netns add $ns failed"
        ip link add "$v" type veth peer name "$v-p" || die "cannot create veth $v"
        ip link set "$v-p" netns "$ns" || die "cannot move $v-p into $ns"
        ip netns exec "$ns" ip link set "$v-p" name eth0 || die "cannot rename eth0 in $ns"
        ip netns exec "$ns" ip addr add "$addr/24" dev eth0 || die "cannot address $ns"
        ip netns exec "$ns" ip link set lo up || die "cannot bring lo up in $ns"
        ip netns exec "$ns" ip link set eth0 up || die "cannot bring eth0 up in $ns"
        ip netns exec "$ns" ip route add default via "$GW" || die "cannot route $ns"
        ip link set "$v" master "$BR" || die "cannot attach $v to $BR"
        ip link set "$v" up || die "cannot bring $v up"
        # the node's NIC: egress inside the node, ingress as the bridge side's egress
        limit "$ns" eth0 || die "htb on $ns eth0 refused (rate $RATE)"
        limit "" "$v" || die "htb on $v refused (rate $RATE)"
        hosts="$hosts${hosts:+,}$addr"
        i=$((i + 1))
    done
    write_agent || die "cannot write the rsh agent"
    cat >"$STATE/env" <<EOF
SCEMU_AGENT=$STATE/rsh-agent
SCEMU_HOSTS=$hosts
SCEMU_SUBNET=$NET.0/24
SCEMU_NODES=$K
SCEMU_RATE=$RATE
SCEMU_STATE=$STATE
EOF
    ok=1
    trap - EXIT INT TERM HUP
    say "up: $K node(s) $PREFIX-n0..$PREFIX-n$((K - 1)) at $hosts on $BR ($GW), htb $RATE each way"
}

status() {
    echo "namespaces:"
    ip netns list 2>/dev/null | grep "^$PREFIX-" || echo "  (none)"
    echo "links:"
    ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | grep "^$PREFIX-" || echo "  (none)"
    [ -f "$STATE/env" ] && cat "$STATE/env"
    return 0
}

# ---- main -------------------------------------------------------------------------------
[ $# -ge 1 ] || usage
cmd=$1
shift
K=2
RATE=1gbit
while [ $# -gt 0 ]; do
    case $1 in
    -k) [ $# -ge 2 ] || usage; K=$2; shift 2 ;;
    -r) [ $# -ge 2 ] || usage; RATE=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) [ "$cmd" = exec ] && break; say "unknown argument '$1'"; usage ;;
    esac
done

case $cmd in
up) OWNER=${SCEMU_OWNER:-$PPID}; up ;;
down) down; say "down: '$PREFIX' removed" ;;
status) status ;;
env) [ -f "$STATE/env" ] || die "no emulated cluster '$PREFIX' is up"; cat "$STATE/env" ;;
exec)
    [ $# -ge 1 ] || { say "exec: expected -- CMD"; usage; }
    OWNER=$$
    up
    # from here on the cluster goes away however this ends
    trap 'rc=$?; down; say "down: '"'$PREFIX'"' removed"; exit $rc' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    set -a
    . "$STATE/env"
    set +a
    "$@"
    exit $?
    ;;
-h | --help | help) usage ;;
*) say "unknown command '$cmd'"; usage ;;
esac
