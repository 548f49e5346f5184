#!/usr/bin/env python3
"""Concatenates result CSVs of the common schema (BENCHMARKS.md "Result files") into one CSV and its
.json twin: the rows of every input in order, the extra columns the union of theirs (first-seen
order, empty where a file lacks one). The output may be one of the inputs (all are read first).

  python3 concat_results.py --out async.csv async.csv sizes/5x300/async.csv sizes/64x4/async.csv

Used by scripts/device_run.sh to put baton_bench_async's runs at several sizes into one async.csv
(the shape column tells them apart). Exit status 0, 2 when an input is missing or not in the schema.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", metavar="CSV")
    ap.add_argument("--out", required=True, help="the CSV to write (a .json twin is written next to it)")
    a = ap.parse_args(argv)
    rows = []
    for p in a.inputs:
        if not os.path.isfile(p):
            print(f"concat_results.py: no such file: {p}", file=sys.stderr)
            return 2
        try:
            rows += results.read_rows(p)
        except results.SchemaError as e:
            print(f"concat_results.py: {e}", file=sys.stderr)
            return 2
    json_path = results.write_rows(a.out, rows, results.SCHEMA + results.extra_columns(rows))
    print(f"wrote {a.out} and {json_path}: {len(rows)} rows from {len(a.inputs)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
