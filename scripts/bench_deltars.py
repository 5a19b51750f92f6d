#!/usr/bin/env python3
"""One delta-rs cell of scripts/bench, run in the benchmark's virtual environment.

Scans with delta-rs's QueryBuilder (DataFusion inside delta-rs), dropping each batch as it
arrives, or opens the table and lists its active files. Prints one result line in the format
of examples/bench/cell.rs:  BENCH-RESULT {"ok": {...}}  or  {"failed": "..."}.

Usage: bench_deltars.py --table PATH_OR_URL --mode scan --sql "SELECT ... FROM lineitem"
       bench_deltars.py --table PATH_OR_URL --mode log
"""

import argparse
import json
import time


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rchar():
    try:
        with open("/proc/self/io") as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def signed64(n):
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n


def run(args):
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import DeltaTable, QueryBuilder

    read_before = rchar()
    started = time.perf_counter()
    ttfb = None
    rows = 0
    checksum = 0
    dt = DeltaTable(args.table)
    if args.mode == "log":
        actions = pa.table(dt.get_add_actions(flatten=False))
        rows = actions.num_rows
        checksum = pc.sum(actions.column("size_bytes")).as_py() or 0
    else:
        reader = QueryBuilder().register("lineitem", dt).execute(args.sql)
        for batch in reader:
            batch = pa.record_batch(batch)
            if ttfb is None:
                ttfb = time.perf_counter() - started
            rows += batch.num_rows
            if "l_orderkey" in batch.schema.names:
                checksum += pc.sum(batch.column("l_orderkey")).as_py() or 0
            del batch
    secs = time.perf_counter() - started
    return {
        "secs": secs,
        "ttfb_secs": ttfb,
        "rows": rows,
        "checksum": signed64(checksum),
        "bytes": rchar() - read_before,
        "bytes_from": "rchar",
        "rss_kib": status_kib("VmHWM"),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", required=True)
    p.add_argument("--mode", choices=["scan", "log"], required=True)
    p.add_argument("--sql")
    args = p.parse_args()
    try:
        outcome = {"ok": run(args)}
    except Exception as e:  # every failure is a printed cell, never a missing one
        message = (str(e).strip().splitlines() or [type(e).__name__])[0]
        outcome = {"failed": f"{type(e).__name__}: {message}"}
    print("BENCH-RESULT " + json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
