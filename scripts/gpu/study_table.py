"""The study's table and plot from training runs' metrics.jsonl (one folder a
recipe, the first the baseline): final loss (mean of the last 20 steps),
paired gap to the baseline (same weights and batches), and the extra tokens
a recipe needs to reach the baseline's loss at 75% of the run (losses
smoothed over 20 steps; percentages against the baseline's own crossing). With several seeds (RUN_DIRS comma-separated, one
folder of recipes a seed) the table gives the mean over seeds and each
seed's gap. Writes a Markdown table to stdout and an SVG plot (first seed).
Usage: study_table.py RUN_DIR[,RUN_DIR...] PLOT.svg RECIPE..."""
import json
import sys

run_dirs, plot, recipes = sys.argv[1].split(","), sys.argv[2], sys.argv[3:]


def curve(run_dir, recipe):
    records = [json.loads(l) for l in open(f"{run_dir}/{recipe}/metrics.jsonl") if l.strip()]
    return [(r["tokens"], r["loss"]) for r in records if "loss" in r]


def smooth(losses, width=20):
    return [sum(losses[max(0, i - width + 1):i + 1]) / len(losses[max(0, i - width + 1):i + 1])
            for i in range(len(losses))]


runs = [{r: curve(d, r) for r in recipes} for d in run_dirs]
steps = len(runs[0][recipes[0]])
target_step = int(0.75 * steps)
tokens_per_step = runs[0][recipes[0]][0][0]
rows = {r: [] for r in recipes}  # per seed: (final, gap, reached)
for curves in runs:
    base = [l for _, l in curves[recipes[0]]]
    target = smooth(base)[target_step - 1]
    final_base = sum(base[-20:]) / 20
    for recipe in recipes:
        losses = [l for _, l in curves[recipe]]
        final = sum(losses[-20:]) / 20
        reached = next((i + 1 for i, l in enumerate(smooth(losses)) if l <= target), None)
        rows[recipe].append((final, final - final_base, reached))
seeds = len(runs)
print(f"| recipe | final loss (last 20 steps{', mean of %d seeds' % seeds if seeds > 1 else ''}) "
      f"| gap to {recipes[0]}{' (per seed)' if seeds > 1 else ''} "
      f"| tokens to reach {recipes[0]}'s step-{target_step} loss |")
print("|---|---|---|---|")
base_reached = sum(r for _, _, r in rows[recipes[0]]) / seeds
for recipe in recipes:
    finals, gaps, reached = zip(*rows[recipe])
    final = sum(finals) / seeds
    gap = "" if recipe == recipes[0] else f"{sum(gaps) / seeds:+.4f}" + (
        " (" + ", ".join(f"{g:+.4f}" for g in gaps) + ")" if seeds > 1 else "")
    if all(reached):
        mean = sum(reached) / seeds
        extra = f"{mean * tokens_per_step / 1e6:.1f} M" + (
            f" ({100 * (mean / base_reached - 1):+.0f}%)" if recipe != recipes[0] else "")
    else:
        extra = f"not within {steps} steps ({sum(1 for r in reached if not r)} of {seeds} seeds)"
    print(f"| {recipe} | {final:.4f} | {gap} | {extra} |")

curves = runs[0]
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
