#!/usr/bin/env python3
"""Turns `strata bench gemm --csv` output into the Markdown tables of docs/PERFORMANCE.md.

Usage: bench/gemm_csv_to_markdown.py gemm.csv [gemm_u8s8s32.csv ...]
One table per element type, one row per (problem, threads): strata's GFLOPS and % of peak,
each peer's GFLOPS, and strata / best peer (bold). Peers that failed verification are marked
"(wrong)".
"""
import csv
import sys


def table(path):
    rows, peers = {}, []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["problem"], r["dtype"], r["threads"])
            entry = rows.setdefault(key, {})
            lib = r["library"]
            if lib.startswith("strata"):
                entry["strata"] = (float(r["gflops"]), float(r["pct_peak"]), float(r["ratio_to_best_peer"]))
            else:
                if lib not in peers:
                    peers.append(lib)
                entry[lib] = (float(r["gflops"]), r["verified"] == "1")
    names = {"openblas": "OpenBLAS", "blis": "BLIS", "onednn": "oneDNN"}
    head = ["problem", "type", "thr", "strata GFLOPS", "% peak"] + [names.get(p, p) for p in peers] + ["strata / best peer"]
    tables = {}
    for (problem, dtype, threads), entry in rows.items():
        out = tables.setdefault(dtype, ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)])
        g, pct, ratio = entry.get("strata", (0.0, 0.0, 0.0))
        cells = [problem, dtype, threads, f"{g:.1f}", f"{pct:.0f}%"]
        for p in peers:
            if p in entry:
                pg, ok = entry[p]
                cells.append(f"{pg:.1f}" + ("" if ok else " (wrong)"))
            else:
                cells.append("—")
        cells.append(f"**{ratio:.2f}x**" if ratio > 0 else "—")
        out.append("| " + " | ".join(cells) + " |")
    return "\n\n".join("\n".join(t) for t in tables.values())


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n\n".join(table(p) for p in sys.argv[1:]))
