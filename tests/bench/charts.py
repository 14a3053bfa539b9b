#!/usr/bin/env python3
"""Charts for the warden benchmark (PNG, matplotlib).

    python3 tests/bench/charts.py [--results target/bench/results.md]
                                  [--contended target/bench/contended.json]
                                  [--stampede target/bench/stampede.json]
                                  [--out target/bench]

Writes
  <out>/server_us_per_call.png  (a) server µs/call per command (INFO commandstats, -P1),
                                    from the first table of results.md (written by bench.sh)
  <out>/throughput.png          (b) redis-benchmark requests/s at -P1 and -P16 per command,
                                    same table
  <out>/contended.png           (c) contended lock: critical sections/s vs clients for the
                                    three variants; hand-off p50/p99 vs clients, to another
                                    client (solid) and to any next holder (dotted); and the
                                    share of hand-offs that went to another client (the
                                    rest are the releasing client re-taking the lock), from
                                    contended.json (written by contended.py)
  <out>/stampede.png            (d) cache stampede: source calls per stampede and client
                                    latency p50/p99 per variant, from stampede.json
                                    (written by tests/bench/stampede.rs)
A chart whose input is missing is skipped with a message.

matplotlib: when `import matplotlib` fails, the script creates a venv in
target/bench/venv (CHARTS_VENV overrides), pip-installs matplotlib there and re-runs
itself with that interpreter. If that is not possible (no venv/pip, no network) it
prints why and exits 0 without charts. Exit 1 only when an input cannot be parsed.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "target", "bench")


def log(msg):
    print("charts: " + msg, file=sys.stderr)


def ensure_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("CHARTS_BOOTSTRAPPED") == "1":
        log("skipped: matplotlib still missing in %s" % sys.executable)
        sys.exit(0)
    venv = os.environ.get("CHARTS_VENV", os.path.join(OUT, "venv"))
    py = os.path.join(venv, "bin", "python")
    try:
        if not os.path.exists(py):
            log("creating %s" % venv)
            subprocess.run([sys.executable, "-m", "venv", venv], check=True,
                           stdout=subprocess.DEVNULL, timeout=300)
        ok = subprocess.run([py, "-c", "import matplotlib"], stderr=subprocess.DEVNULL,
                            timeout=120).returncode == 0
        if not ok:
            log("pip install matplotlib into %s" % venv)
            subprocess.run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "matplotlib"], check=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        log("skipped: could not install matplotlib (%s)" % e)
        sys.exit(0)
    env = dict(os.environ, CHARTS_BOOTSTRAPPED="1")
    os.execve(py, [py, os.path.abspath(__file__)] + sys.argv[1:], env)


def num(text):
    text = text.strip().replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def read_results(path):
    """Rows of the first table of results.md: (command, us_per_call, rps_p1, rps_p16)."""
    rows, header = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|"):
                if header is not None and rows:
                    break          # end of the first table
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                if cells and cells[0] == "command" and "server µs/call" in cells:
                    header = cells
                continue
            if set(line) <= set("|-: "):
                continue
            d = dict(zip(header, cells))
            rows.append((d["command"], num(d.get("server µs/call", "")),
                         num(d.get("rps -P1", "")), num(d.get("rps -P16", ""))))
    if header is None:
        raise ValueError("no '| command | server µs/call | …' table in %s" % path)
    return rows


def family(name):
    if name.startswith("Lua"):
        return "Lua script (seed)", "#d95f02"
    if "RedisBloom" in name:
        return "RedisBloom", "#7570b3"
    command = name.split(" ")[0].rstrip(",")
    if command.startswith(("DLOCK.", "RL.")) or (command.startswith("BF.") and command.endswith("X")):
        return "warden module", "#1b9e77"
    return "plain Redis", "#999999"


def legend_for(ax, names):
    from matplotlib.patches import Patch
    seen = {}
    for n in names:
        label, color = family(n)
        seen.setdefault(label, color)
    ax.legend(handles=[Patch(color=c, label=l) for l, c in seen.items()], loc="lower right",
              fontsize=8)


def chart_us(rows, path, subtitle):
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r[1] is not None]
    if not rows:
        return False
    names = [r[0] for r in rows]
    vals = [r[1] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.38 * len(rows) + 1.6))
    y = range(len(rows))
    ax.barh(y, vals, color=[family(n)[1] for n in names])
    ax.set_yticks(list(y), names, fontsize=9)
    ax.invert_yaxis()
    for i, v in enumerate(vals):
        ax.text(v, i, " %.2f" % v, va="center", fontsize=8)
    ax.set_xlabel("server µs per call (INFO commandstats usec / calls, -P1)")
    ax.set_xlim(0, max(vals) * 1.15)
    ax.set_title("Server CPU per call\n" + subtitle, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    legend_for(ax, names)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def chart_rps(rows, path, subtitle):
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r[2] is not None or r[3] is not None]
    if not rows:
        return False
    names = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.6))
    h = 0.4
    y = list(range(len(rows)))
    p1 = [r[2] or 0 for r in rows]
    p16 = [r[3] or 0 for r in rows]
    colors = [family(n)[1] for n in names]
    ax.barh([i - h / 2 for i in y], p1, h, color=colors, alpha=0.45, label="-P1")
    ax.barh([i + h / 2 for i in y], p16, h, color=colors, label="-P16")
    for i in y:
        ax.text(p1[i], i - h / 2, " %s" % "{:,.0f}".format(p1[i]), va="center", fontsize=7)
        ax.text(p16[i], i + h / 2, " %s" % "{:,.0f}".format(p16[i]), va="center", fontsize=7)
    ax.set_yticks(y, names, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, max(p1 + p16) * 1.18)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "{:,.0f}".format(v)))
    ax.set_xlabel("requests/s (redis-benchmark; pale bar -P1, solid bar -P16)")
    ax.set_title("Throughput per command\n" + subtitle, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    legend_for(ax, names)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def handoff_counts(cell):
    """(hand-offs to another client, all hand-offs) summed over the cell's rounds, or
    None when the JSON has no per-round data."""
    rounds = cell.get("per_round") or []
    if not rounds or any(r.get("handoffs") is None or r.get("other_share") is None
                         for r in rounds):
        return None
    total = sum(r["handoffs"] for r in rounds)
    other = sum(round(r["handoffs"] * r["other_share"]) for r in rounds)
    return other, total


def chart_contended(data, path):
    import matplotlib.pyplot as plt
    cells = data["cells"]
    variants = []
    for c in cells:
        if c["variant"] not in variants:
            variants.append(c["variant"])
    styles = {"lua-100ms": ("#d95f02", "s", ":"), "lua-1ms": ("#e6ab02", "^", "--"),
              "dlock-wait": ("#1b9e77", "o", "-")}
    clients = sorted({c["clients"] for c in cells})
    from matplotlib.ticker import FuncFormatter, LogLocator
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(19, 6.4),
                                     gridspec_kw={"width_ratios": [1.0, 1.15, 0.9]})
    for v in variants:
        cs = sorted((c for c in cells if c["variant"] == v), key=lambda c: c["clients"])
        color, marker, ls = styles.get(v, ("#444444", "x", "-"))
        xs = [c["clients"] for c in cs]
        ys = [c["rate"] for c in cs]
        if all("rate_min" in c for c in cs):   # range over rounds
            err = [[y - c["rate_min"] for y, c in zip(ys, cs)],
                   [c["rate_max"] - y for y, c in zip(ys, cs)]]
            shift = 1 + 0.035 * (variants.index(v) - (len(variants) - 1) / 2)
            a1.errorbar([x * shift for x in xs], ys, yerr=err, fmt="none", ecolor=color,
                        alpha=0.5, capsize=3)
        a1.plot(xs, ys, ls, marker=marker, color=color, label=cs[0]["label"])
        for c in cs:
            a1.annotate("{:,.0f}".format(c["rate"]), (c["clients"], c["rate"]), fontsize=7,
                        textcoords="offset points", xytext=(4, 4), color=color)
        # Hand-off latency to ANOTHER client (the hand-off a waiter sees), solid; the
        # latency over every grant, the releasing client's own re-takes included, faint.
        other50 = [(c["clients"], c["other_p50_us"]) for c in cs if c.get("other_p50_us")]
        other99 = [(c["clients"], c["other_p99_us"]) for c in cs if c.get("other_p99_us")]
        any50 = [(c["clients"], c["handoff_p50_us"]) for c in cs if c["handoff_p50_us"]]
        if other50:
            a2.plot(*zip(*other50), ls, marker=marker, color=color,
                    label=cs[0]["label"] + ": p50, to another client")
        if other99:
            a2.plot(*zip(*other99), ls, marker=marker, color=color, alpha=0.45,
                    markerfacecolor="none", label=cs[0]["label"] + ": p99, to another client")
        if any50:
            a2.plot(*zip(*any50), ":", marker=marker, color=color, alpha=0.3, markersize=4,
                    lw=1, label=cs[0]["label"] + ": p50, any next holder")
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.set_xticks(clients, [str(c) for c in clients])
        ax.minorticks_off()
        ax.set_xlabel("clients on one lock key")
        ax.grid(alpha=0.3)
    a1.set_ylim(bottom=0, top=max(c.get("rate_max", c["rate"]) for c in cells) * 1.15)
    a1.set_ylabel("critical sections / s")
    a1.set_title("acquire → INCR → release cycles per second\n"
                 "(median over rounds; bars: slowest–fastest round)", fontsize=10)
    a1.legend(fontsize=8, loc="lower left")
    a2.set_yscale("log")
    a2.axhline(1000, color="#cc0000", lw=0.8, ls="--")
    a2.text(clients[0], 1000, " 1 ms goal (p99, 50 clients)", color="#cc0000", fontsize=7,
            va="bottom")
    a2.set_ylabel("µs (log scale)")
    a2.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    a2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "{:,.0f}".format(v)))
    a2.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    a2.set_title("hand-off: release sent → next grant received (median over rounds)\n"
                 "solid: grants to another client; dotted: any next holder", fontsize=10)
    a2.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3)

    # Who got the lock next: the share of hand-offs that went to another client. A
    # retry-sleep lock is mostly re-taken by the client that just released it, so its
    # fast "hand-offs" are not hand-offs at all; DLOCK WAIT hands over FIFO.
    # With one client every grant is that client's own: nothing to share.
    shared = [n for n in clients if n > 1] or clients
    width = 0.8 / max(1, len(variants))
    for vi, v in enumerate(variants):
        color = styles.get(v, ("#444444", "x", "-"))[0]
        for xi, n in enumerate(shared):
            c = next((c for c in cells if c["variant"] == v and c["clients"] == n), None)
            if c is None:
                continue
            x = xi + (vi - (len(variants) - 1) / 2) * width
            share = c.get("other_share")
            height = 0.0 if share is None else 100 * share
            a3.bar(x, height, width * 0.92, color=color,
                   label=c["label"] if xi == 0 else None)
            counts = handoff_counts(c)
            if share is None:
                text = "—"
            else:
                text = "%.2f%%" % height if height < 1 else "%.1f%%" % height if height < 10 \
                    else "%.0f%%" % height
            if counts is not None:
                text += "\n{:,}\nof {:,}".format(*counts)
            a3.text(x, height + 1.5, text, ha="center", va="bottom", fontsize=6.5, color=color)
    a3.set_xticks(range(len(shared)), [str(c) for c in shared])
    a3.set_xlabel("clients on one lock key")
    a3.set_ylim(0, 130)
    a3.set_yticks([0, 25, 50, 75, 100])
    a3.set_ylabel("% of hand-offs to another client (all rounds)")
    a3.set_title("who holds the lock next: share to another client\n"
                 "(the rest: the releasing client took it again)", fontsize=10)
    a3.grid(axis="y", alpha=0.3)
    a3.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1)
    fig.suptitle("Contended lock — " + data.get("meta", ""), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def chart_stampede(data, path):
    import matplotlib.pyplot as plt
    variants = list(data["variants"].items())
    labels = {"naive": "GET → miss →\nsource → SET", "seed-lua": "seed's Lua\n(GET+INCR+EXPIRE+compare)",
              "lease-wait": "CACHE.GET …\nLEASE WAIT"}
    colors = {"naive": "#d95f02", "seed-lua": "#e6ab02", "lease-wait": "#1b9e77"}
    xs = range(len(variants))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 5))
    for i, (v, r) in enumerate(variants):
        c = colors.get(v, "#444444")
        a1.bar(i, r["source_calls_median"], 0.6, color=c)
        a1.text(i, r["source_calls_median"], " %d" % r["source_calls_median"], ha="center",
                va="bottom", fontsize=9)
        a2.bar(i - 0.15, r["p50_ms"], 0.3, color=c, alpha=0.55, label="p50" if i == 0 else None)
        a2.bar(i + 0.15, r["p99_ms"], 0.3, color=c, label="p99" if i == 0 else None)
        a2.text(i + 0.15, r["p99_ms"], "%.1f" % r["p99_ms"], ha="center", va="bottom", fontsize=8)
    for ax in (a1, a2):
        ax.set_xticks(list(xs), [labels.get(v, v) for v, _ in variants], fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    a1.set_ylabel("source calls per stampede (median)")
    a1.set_title("%d clients miss one key at once" % data["clients"], fontsize=10)
    a2.axhline(data["source_ms"] + 2, color="#cc0000", lw=0.8, ls="--")
    a2.text(-0.4, data["source_ms"] + 2, " source + 2 ms goal (p99)", color="#cc0000",
            fontsize=7, va="bottom")
    a2.set_ylabel("ms until the client holds the value")
    a2.set_title("latency (the source takes %d ms)" % data["source_ms"], fontsize=10)
    a2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description="warden benchmark charts")
    ap.add_argument("--results", default=os.path.join(OUT, "results.md"))
    ap.add_argument("--contended", default=os.path.join(OUT, "contended.json"))
    ap.add_argument("--stampede", default=os.path.join(OUT, "stampede.json"))
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    ensure_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    os.makedirs(args.out, exist_ok=True)
    written = []
    if os.path.exists(args.results):
        rows = read_results(args.results)
        if not rows:
            raise SystemExit("charts: the results table in %s has no rows" % args.results)
        subtitle = ""
        with open(args.results, encoding="utf-8") as f:
            for line in f:
                if line.startswith("- date:") or line.startswith("- machine:"):
                    subtitle += line[2:].strip() + "   "
        for fn, name in ((chart_us, "server_us_per_call.png"), (chart_rps, "throughput.png")):
            path = os.path.join(args.out, name)
            if fn(rows, path, subtitle.strip()) is False:
                log("no measured rows for %s: skipped" % name)
            else:
                written.append(path)
    else:
        log("no %s: skipping the per-command charts (run make bench)" % args.results)
    if os.path.exists(args.contended):
        with open(args.contended, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("cells"):
            path = os.path.join(args.out, "contended.png")
            chart_contended(data, path)
            written.append(path)
        else:
            log("%s has no cells: skipping the contended chart" % args.contended)
    else:
        log("no %s: skipping the contended chart (run tests/bench/contended.py --json)"
            % args.contended)
    if os.path.exists(args.stampede):
        with open(args.stampede, encoding="utf-8") as f:
            data = json.load(f)
        path = os.path.join(args.out, "stampede.png")
        chart_stampede(data, path)
        written.append(path)
    else:
        log("no %s: skipping the stampede chart (make bench writes it with tests/bench/stampede.rs)"
            % args.stampede)
    for p in written:
        rel = os.path.relpath(p, os.getcwd())
        log("wrote " + (p if rel.startswith("..") else rel))


if __name__ == "__main__":
    main()
