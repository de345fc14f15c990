"""The study's table and plot from training runs' metrics.jsonl (one folder a
recipe, the first the baseline): final loss (mean of the last 20 steps),
paired gap to the baseline (same weights and batches), and the extra tokens
a recipe needs to reach the baseline's loss at 75% of the run (losses
smoothed over 20 steps). Writes a Markdown table to stdout and an SVG plot.
Usage: study_table.py RUN_DIR PLOT.svg RECIPE..."""
import json
import sys

run_dir, plot, recipes = sys.argv[1], sys.argv[2], sys.argv[3:]


def curve(recipe):
    records = [json.loads(l) for l in open(f"{run_dir}/{recipe}/metrics.jsonl") if l.strip()]
    return [(r["tokens"], r["loss"]) for r in records if "loss" in r]


def smooth(losses, width=20):
    return [sum(losses[max(0, i - width + 1):i + 1]) / len(losses[max(0, i - width + 1):i + 1])
            for i in range(len(losses))]


curves = {r: curve(r) for r in recipes}
base = curves[recipes[0]]
steps = len(base)
target_step = int(0.75 * steps)
target = smooth([l for _, l in base])[target_step - 1]
tokens_per_step = base[0][0]
print(f"| recipe | final loss (last 20 steps) | gap to {recipes[0]} | "
      f"tokens to reach {recipes[0]}'s step-{target_step} loss ({target:.4f}) |")
print("|---|---|---|---|")
final_base = sum(l for _, l in base[-20:]) / 20
for recipe in recipes:
    losses = [l for _, l in curves[recipe]]
    final = sum(losses[-20:]) / 20
    reached = next((i + 1 for i, l in enumerate(smooth(losses)) if l <= target), None)
    extra = (f"{reached * tokens_per_step / 1e6:.1f} M ({100 * (reached / target_step - 1):+.0f}%)"
             if reached else f"not within {steps} steps")
    gap = "" if recipe == recipes[0] else f"{final - final_base:+.4f}"
    print(f"| {recipe} | {final:.4f} | {gap} | {extra} |")

# The plot: smoothed loss against tokens, after the first 10% of the run.
width, height, left, bottom = 720, 420, 60, 40
start = steps // 10
points = {r: list(zip([t for t, _ in c], smooth([l for _, l in c])))[start:] for r, c in curves.items()}
xs = [t for p in points.values() for t, _ in p]
ys = [l for p in points.values() for _, l in p]
x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)


def at(t, l):
    return (left + (t - x0) / (x1 - x0) * (width - left - 20),
            height - bottom - (l - y0) / (y1 - y0) * (height - bottom - 20))


colors = ["#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
       f'font-family="sans-serif" font-size="12">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{left}" y="14">training loss (20-step mean) against tokens</text>']
for i in range(5):
    t = x0 + (x1 - x0) * i / 4
    l = y0 + (y1 - y0) * i / 4
    x, _ = at(t, y0)
    _, y = at(x0, l)
    svg.append(f'<text x="{x:.0f}" y="{height - bottom + 16}" text-anchor="middle">{t / 1e6:.1f}M</text>')
    svg.append(f'<text x="{left - 6}" y="{y + 4:.0f}" text-anchor="end">{l:.2f}</text>')
    svg.append(f'<line x1="{left}" x2="{width - 20}" y1="{y:.0f}" y2="{y:.0f}" stroke="#eee"/>')
for k, (recipe, pts) in enumerate(points.items()):
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in (at(t, l) for t, l in pts))
    svg.append(f'<polyline fill="none" stroke="{colors[k % len(colors)]}" stroke-width="1.5" points="{path}"/>')
    svg.append(f'<text x="{width - 200}" y="{40 + 16 * k}" fill="{colors[k % len(colors)]}">{recipe}</text>')
svg.append("</svg>")
open(plot, "w").write("\n".join(svg) + "\n")
