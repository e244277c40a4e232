#!/usr/bin/env python3
"""ds_fetch_replay.py — replays DeepSpeed ZeRO-3's sub-module parameter fetch over one micro-step of a
Megatron GPT block stack, on the per-layer times shardcast's simulator prints in a trace, and reports
the all-gather time the compute waits for under three readings of when a gather is issued.

It is an experiment's instrument (docs/DEEPSPEED-RESIDUALS.md, pick33), not part of the model: the
engines keep their per-layer items. Nothing here is fitted to a measurement.

  layer  the engines' schedule: a block's gathers (one per sub-module, back to back) issued when the
         GPU starts the block before it (prefetch depth 1 layer, model/framework.c fw_prefetch);
  gpu    DeepSpeed's PartitionedParameterCoordinator queue (fetch the current sub-module's
         parameters, then prefetch from the trace until stage3_prefetch_bucket_size elements), with
         each hook run when the GPU reaches its sub-module (the reading of the earlier attempt);
  host   the same queue with each hook run when the host reaches it: the host waits only on the
         fetch event three waits back (__max_ongoing_fetch_events 2) and its own pace.
Sources (deepspeedai/DeepSpeed v0.9.5, fc9e1ee0, the release of the ZeRO++ blog's day; the same
logic at v0.6.2, 32d97976, L205-280 and L358-378, the Azure blog's release):
partitioned_param_coordinator.py L98-109 (__max_ongoing_fetch_events = 2: "memory is allocated by
the host thread at the time of the call, but not used until later by the asynchronous cuda stream"),
L254 (all-gather the current sub-module's parameters not yet in flight), L258-275 (per one in
flight: pop finished events, synchronize the oldest when more than 2, handle.wait() on the
all-gather stream, record an event; the compute stream waits for the all-gather stream), L277-298
(discard the current parameters from the trace queue), L309-338 (prefetch from the queue while
fewer than min(max_live - available, prefetch_bucket_sz) elements are taken, skipping available
ones: one coalesced all-gather), L375-390; L409-440 (release unless reused within
max_reuse_distance elements of the trace); partition_parameters.py L893-959 (one async torch
all-gather per coalesced set).

usage: ds_fetch_replay.py --self-test | TRACE.json [--blocks 40] [--h 6144] [--one-stream 1] [--fetch-lat-ms L]
TRACE: `shardcast predict ... --trace T --trace-ranks 1` of one zero3 / zeropp layout (rank 0).
"""
import argparse
import collections
import json

BUCKET = 5e7      # stage3_prefetch_bucket_size default (elements): runtime/zero/config.py
LIVE = REUSE = 1e9  # stage3_max_live_parameters, stage3_max_reuse_distance defaults (elements)
MAX_EVENTS = 2    # __max_ongoing_fetch_events


def trace_times(path, blocks):
    """A block's forward / backward compute (ms, the median item: the embedding and head are the ends),
    its forward and backward all-gathers (hpZ: the backward's from the secondary copy) and its
    reduce-scatter time (all pieces of the step / blocks)."""
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0]
    comp = [e for e in ev if e["tid"] == 0 and e["name"] in ("forward", "backward")]
    med = lambda xs: sorted(xs)[len(xs) // 2]
    fb = med([e["dur"] / 1e3 for e in comp if e["name"] == "forward"])
    bb = med([e["dur"] / 1e3 for e in comp if e["name"] == "backward"])
    ag = [e for e in ev if e["tid"] != 0 and e["name"].startswith("all-gather")]
    sec = [e["dur"] / 1e3 for e in ag if "secondary" in e["name"]]
    pri = [e["dur"] / 1e3 for e in ag if "secondary" not in e["name"]]
    gf = med(pri)
    gb = med(sec) if sec else gf
    rs = sum(e["dur"] / 1e3 for e in ev if e["tid"] != 0 and e["name"].startswith("reduce-scatter")) / blocks
    return fb, bb, gf, gb, rs


def replay(mode, nblk, h, fwd_ms, bwd_ms, g_lat, g_ms_per_elem_f, g_ms_per_elem_b, rs_ms, one_stream, attn_share,
           host_ms=0.05, live=LIVE, reuse=REUSE):
    """All-gather time the GPU waits for in one micro-step (ms). Megatron block sub-modules:
    query_key_value, dense, dense_h_to_4h, dense_4h_to_h weights (elements; the biases and norms are
    below stage3_param_persistence_threshold); the GPU work between consecutive hooks split by
    their GEMMs' share, the core attention in query_key_value's interval (attn_share of h^2)."""
    size = [3 * h * h, h * h, 4 * h * h, 4 * h * h]
    share = [3 + attn_share, 1, 4, 4]
    tot = sum(share)
    cf = [fwd_ms * s / tot for s in share]                 # forward intervals
    cb = [(bwd_ms - fwd_ms) * s / tot for s in share]      # backward intervals (after the recompute)
    # trace: (param id or None, compute ms, pass 'f'/'b', is_fetch_use, block end marker)
    tr = []
    for b in range(nblk):
        for i in range(4):
            tr.append(((b, i), cf[i], "f", None))
    for b in reversed(range(nblk)):
        for i in range(4):
            tr.append(((b, i), cf[i], "b", None))          # recompute
        for i in reversed(range(4)):
            tr.append(((b, i), cb[i], "b", "rs" if i == 0 else None))
    sz = {(b, i): size[i] for b in range(nblk) for i in range(4)}
    status = {p: "N" for p in sz}                          # N not available, I in flight, A available
    done_at = {}                                           # param -> end of its gather (ms)
    stream_free = [0.0, 0.0]                               # gather stream, reduce stream
    events = collections.deque()
    host = gpu = exposed = 0.0
    n_avail = 0.0
    queue = collections.deque(p for p, _, _, _ in tr)     # the trace's parameter uses, in order

    def gather(params, t_issue, pas):
        nonlocal n_avail
        ps = [p for p in params if status[p] == "N"]
        if not ps:
            return
        el = sum(sz[p] for p in ps)
        dur = g_lat[pas == "b"] + el * (g_ms_per_elem_f if pas == "f" else g_ms_per_elem_b)
        start = max(stream_free[0], t_issue)
        stream_free[0] = start + dur
        for p in ps:
            status[p] = "I"
            done_at[p] = stream_free[0]
        n_avail += el

    def reused_soon(k, p):
        seen = 0.0
        for q, _, _, _ in tr[k + 1:]:
            if seen > reuse:
                return False
            if q == p:
                return True
            seen += sz[q]
        return False

    if mode == "layer":
        # block j's four gathers issued when the GPU starts block j - 1 (pass-wise order)
        order = []
        for k, (p, c, pas, m) in enumerate(tr):
            if not order or order[-1][0] != (p[0], pas, k >= 4 * nblk):
                order.append([(p[0], pas, k >= 4 * nblk), k])
        starts = [o[1] for o in order]
        blk_of = {}
        for j, s in enumerate(starts):
            end = starts[j + 1] if j + 1 < len(starts) else len(tr)
            for k in range(s, end):
                blk_of[k] = j
        issued = set()
        for k, (p, c, pas, m) in enumerate(tr):
            j = blk_of[k]
            for jj in (j, j + 1):
                if jj < len(starts) and jj not in issued:
                    issued.add(jj)
                    s = starts[jj]
                    e = starts[jj + 1] if jj + 1 < len(starts) else len(tr)
                    for kk in range(s, e):
                        q = tr[kk][0]
                        if status[q] == "N":
                            gather([q], gpu, tr[kk][2])
            ready = done_at.get(p, 0.0) if status[p] == "I" else 0.0
            if ready > gpu:
                exposed += ready - gpu
                gpu = ready
            status[p] = "A" if status[p] != "N" else status[p]
            gpu += c
            if m == "rs":
                st = 0 if one_stream else 1
                stream_free[st] = max(stream_free[st], gpu) + rs_ms
            if pas == "f" and not reused_soon(k, p):
                status[p] = "N"
        return exposed

    for k, (p, c, pas, m) in enumerate(tr):
        t_hook = gpu if mode == "gpu" else host
        # fetch the current sub-module's parameters (not yet in flight: issued now)
        if status[p] == "N":
            gather([p], t_hook, pas)
        if status[p] == "I":
            while events and events[0] <= t_hook:
                events.popleft()
            if len(events) > MAX_EVENTS:
                t_hook = max(t_hook, events.popleft())
            events.append(done_at[p])
        # discard it from the queue, then prefetch while < BUCKET elements
        while queue and queue[0] == p:
            queue.popleft()
        lim = min(live - n_avail, BUCKET)
        pre, n = [], 0.0
        while queue and n < lim:
            q = queue.popleft()
            if status[q] == "N" and q not in pre:
                pre.append(q)
                n += sz[q]
        gather(pre, t_hook, pas)
        # the GPU runs the interval once its parameters are gathered
        ready = done_at.get(p, 0.0) if status[p] == "I" else 0.0
        start = max(gpu, ready, 0.0)
        exposed += max(0.0, ready - gpu)
        gpu = start + c
        status[p] = "A"
        host = t_hook + host_ms  # the hooks' own pace
        if m == "rs":  # gradient bucket full: issued by the host, runs after the block's backward
            st = 0 if one_stream else 1
            stream_free[st] = max(stream_free[st], gpu, host) + rs_ms
        if not reused_soon(k, p):
            status[p] = "N"
            n_avail -= sz[p]
    return exposed


def self_test():
    """One block of h = 100 with no compute: the GPU waits for every forward gather. By hand: the
    queue fetches query_key_value (1 ms + 3e4 x 1e-4 ms), then prefetches the other three in one
    gather (9e4 elements, under the 5e7 bucket: 1 + 9e4 x 1e-4): 2 + 12 = 14 ms on one stream; the
    layer reading issues four gathers, 4 + 12 = 16 ms. The backward reuses all (1.2e5 elements
    < 1e9): nothing more."""
    for mode, want in (("layer", 16.0), ("gpu", 14.0), ("host", 14.0)):
        got = replay(mode, 1, 100, 0.0, 0.0, (1.0, 1.0), 1e-4, 1e-4, 0.0, 1, 0.0, 0.0)
        assert abs(got - want) < 1e-9, (mode, got, want)
    print("self-test ok")


def main():
    import sys
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--blocks", type=int, default=40)
    ap.add_argument("--h", type=int, default=6144)
    ap.add_argument("--one-stream", type=int, default=1)
    ap.add_argument("--fetch-lat-ms", type=float, required=True)
    ap.add_argument("--fetch-lat-b-ms", type=float, default=None, help="backward gathers' (hpZ: in the node)")
    ap.add_argument("--max-live", type=float, default=LIVE)
    ap.add_argument("--max-reuse", type=float, default=REUSE)
    ap.add_argument("--attn-share", type=float, default=0.167, help="core attention FLOPs / 2 s h^2 per token")
    ap.add_argument("--host-ms", type=float, default=0.05, help="host time per sub-module hook (ms)")
    a = ap.parse_args()
    fb, bb, gf, gb, rs = trace_times(a.trace, a.blocks)
    blk = 12 * a.h * a.h
    per_f = (gf - 4 * a.fetch_lat_ms) / blk
    lat_b = a.fetch_lat_ms if a.fetch_lat_b_ms is None else a.fetch_lat_b_ms
    per_b = (gb - 4 * lat_b) / blk
    print(f"block: fwd {fb:.2f} ms, bwd {bb:.2f} ms; gathers {gf:.2f} / {gb:.2f} ms; reduce-scatter {rs:.2f} ms")
    for mode in ("layer", "gpu", "host"):
        e = replay(mode, a.blocks, a.h, fb, bb, (a.fetch_lat_ms, lat_b), per_f, per_b, rs, a.one_stream, a.attn_share, a.host_ms,
                   a.max_live, a.max_reuse)
        print(f"{mode:6s} exposed all-gather per micro-step: {e / 1e3:.3f} s")


if __name__ == "__main__":
    main()
