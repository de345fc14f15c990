"""Checks a runner's refusal of a training step that does not fit.

    check_memory_message.py MESSAGE PLAN EVAL_BATCHES TOTAL

MESSAGE holds the runner's stderr. Its numbers are recomputed from the
plan's @train_step, independently of the runtime: resident = the step's
buffer arguments (parameters, their two AdamW moments, the token batch) and
EVAL_BATCHES more token batches; temporaries = the most the step's own
allocations and globals hold at once (a free of a view frees what it
views); the device has TOTAL bytes, all free. Prints "ok" or fails.
"""
import re
import sys

message = open(sys.argv[1]).read()
plan_lines = open(sys.argv[2]).read().splitlines()
eval_batches, total = int(sys.argv[3]), int(sys.argv[4])

match = re.search(
    r"the training step of '[^']+' needs (\d+) bytes of device memory "
    r"\((\d+) resident: [^;]+; (\d+) for @train_step's temporaries\) but "
    r"the device has (\d+) free of (\d+)", message)
assert match, "no refusal in: " + message
needed, resident, temporaries, free, whole = map(int, match.groups())

inside = False
buffers = []
live, root, held, peak = {}, {}, 0, 0
for line in plan_lines:
    fields = line.split()
    if not fields:
        continue
    if fields[0] == "function":
        inside = fields[1] == "train_step"
        continue
    if not inside:
        continue
    if fields[0] == "end":
        break
    if fields[0] == "arg" and fields[2] == "buffer":
        buffers.append(int(fields[4]))
    elif fields[0] == "view":
        root[fields[1]] = root.get(fields[2], fields[2])
    elif fields[0] in ("alloc", "global"):
        live[fields[1]] = int(fields[2])
        held += int(fields[2])
        peak = max(peak, held)
    elif fields[0] == "free":
        held -= live.pop(root.get(fields[1], fields[1]), 0)

expected_resident = sum(buffers) + eval_batches * buffers[-1]
assert resident == expected_resident, (resident, expected_resident)
assert temporaries == peak, (temporaries, peak)
assert needed == resident + temporaries, (needed, resident, temporaries)
assert free == whole == total, (free, whole, total)
assert needed > free
print("ok")
