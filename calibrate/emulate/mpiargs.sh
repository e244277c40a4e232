# mpiargs.sh — the mpirun options every emulated-cluster run passes to `shardcast calibrate run`
# (why each: calibrate/emulate/README.md), sourced by run.sh and anchor.sh so they cannot drift.
# scemu_mpi_args HOSTS prints them as --mpi-arg pairs for the host list HOSTS ("a:2,b:2"); the
# cluster's SCEMU_AGENT and SCEMU_SUBNET (cluster.sh env) hold no spaces, so callers may split the
# output on whitespace. Not here: starting the cluster (cluster.sh), the measurements.
scemu_mpi_args() {
    echo --mpi-arg --host --mpi-arg "$1" \
        --mpi-arg --mca --mpi-arg plm_rsh_agent --mpi-arg "$SCEMU_AGENT" \
        --mpi-arg --mca --mpi-arg plm_rsh_no_tree_spawn --mpi-arg 1 \
        --mpi-arg --mca --mpi-arg oob_tcp_if_include --mpi-arg "$SCEMU_SUBNET" \
        --mpi-arg --mca --mpi-arg btl_tcp_if_include --mpi-arg "$SCEMU_SUBNET" \
        --mpi-arg --mca --mpi-arg btl --mpi-arg tcp,self,vader \
        --mpi-arg --bind-to --mpi-arg none \
        --mpi-arg --mca --mpi-arg mpi_yield_when_idle --mpi-arg 1 \
        --mpi-arg --mca --mpi-arg btl_tcp_links --mpi-arg 2 \
        --mpi-arg --mca --mpi-arg coll_tuned_use_dynamic_rules --mpi-arg 1 \
        --mpi-arg --mca --mpi-arg coll_tuned_allgather_algorithm --mpi-arg 4 \
        --mpi-arg --mca --mpi-arg coll_tuned_allreduce_algorithm --mpi-arg 4
}
