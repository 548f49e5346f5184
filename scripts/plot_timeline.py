#!/usr/bin/env python3
"""Draws a baton per-tile timeline (Perfetto/Chrome JSON from baton::write_chrome_trace) as a PNG:
one row per SM, one bar per tile, coloured by stage.  usage: plot_timeline.py IN.json OUT.png [title]"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2
    events = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
    if not events:
        print("no events in", sys.argv[1])
        return 1
    stages = sorted({(e["cat"], e["name"]) for e in events})
    colors = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(14, 7))
    for i, (cat, name) in enumerate(stages):
        bars = [(e["ts"], max(e["dur"], 0.05), e["tid"]) for e in events if e["cat"] == cat]
        for ts, dur, sm in bars:
            ax.broken_barh([(ts, dur)], (sm - 0.4, 0.8), facecolors=colors(i % 10))
        ax.plot([], [], color=colors(i % 10), linewidth=8, label=name)
    ax.set_xlabel("time (us)")
    ax.set_ylabel("SM")
    ax.set_title(sys.argv[3] if len(sys.argv) > 3 else sys.argv[1])
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print("wrote", sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
