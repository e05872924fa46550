#!/usr/bin/env python3
"""Renders a LIBOMPTARGET_PROFILE file (Chrome trace JSON) as an SVG
timeline: one lane per track (host threads, then devices), complete ("X")
events stacked by nesting depth, labelled where they fit. Draws the image
in docs/tools.md where no trace viewer runs (Perfetto's UI needs the
network; headless Chromium does not open chrome://tracing).

    scripts/profile-svg.py profile.json out.svg [--width 1200]
"""
import html
import json
import sys

def main():
    args = sys.argv[1:]
    width = 1200
    if "--width" in args:
        i = args.index("--width")
        width = int(args[i + 1])
        del args[i:i + 2]
    src, out = args
    data = json.load(open(src))
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X" and not e["name"].startswith("Total")]
    if not spans:
        sys.exit("no events")
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e.get("dur", 0) for e in spans)
    tids = sorted({e["tid"] for e in spans}, key=lambda t: (t >= 1 << 30, t))
    left, row, pad = 190, 18, 10
    scale = (width - left - pad) / max(t1 - t0, 1)
    # Depth of each event in its lane: how many open events enclose it.
    lanes = []
    for tid in tids:
        evs = sorted((e for e in spans if e["tid"] == tid), key=lambda e: (e["ts"], -e.get("dur", 0)))
        stack, placed = [], []
        for e in evs:
            while stack and stack[-1] <= e["ts"]:
                stack.pop()
            placed.append((len(stack), e))
            stack.append(e["ts"] + e.get("dur", 0))
        lanes.append((tid, placed, 1 + max(d for d, _ in placed)))
    height = 40 + sum(depth * row + 12 for _, _, depth in lanes) + 30
    palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]
    colour = {}
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{pad}" y="18" font-size="13" font-weight="bold">LIBOMPTARGET_PROFILE timeline ({html.escape(src.split("/")[-1])}, {(t1 - t0) / 1000:.1f} ms)</text>']
    y = 32
    for tid, placed, depth in lanes:
        label = names.get(tid, f"thread {tid}")
        o.append(f'<rect x="0" y="{y - 2}" width="{width}" height="{depth * row + 8}" fill="#f4f4f4"/>')
        o.append(f'<text x="{pad}" y="{y + 12}">{html.escape(label)}</text>')
        for d, e in placed:
            x = left + (e["ts"] - t0) * scale
            w = max(e.get("dur", 0) * scale, 1)
            c = colour.setdefault(e["name"], palette[len(colour) % len(palette)])
            detail = e.get("args", {})
            o.append(f'<rect x="{x:.1f}" y="{y + d * row}" width="{w:.1f}" height="{row - 3}" fill="{c}">'
                     f'<title>{html.escape(e["name"])} {e.get("dur", 0)} us {html.escape(json.dumps(detail))}</title></rect>')
            text = e["name"]
            if w > 7 * len(text):
                o.append(f'<text x="{x + 3:.1f}" y="{y + d * row + 11}" fill="white">{html.escape(text)}</text>')
        y += depth * row + 12
    # Time axis.
    o.append(f'<line x1="{left}" y1="{y}" x2="{width - pad}" y2="{y}" stroke="black"/>')
    for i in range(6):
        x = left + i * (width - left - pad) / 5
        o.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="black"/>')
        o.append(f'<text x="{x:.1f}" y="{y + 16}" text-anchor="middle">{(t1 - t0) * i / 5000:.1f} ms</text>')
    o.append("</svg>")
    open(out, "w").write("\n".join(o))

if __name__ == "__main__":
    main()
