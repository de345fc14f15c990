#!/usr/bin/env python3
# Part of the mxfp4 project, under the Apache License v2.0 with LLVM
# Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks that a tool rejects every malformed input cleanly.

Usage: check_malformed.py TOOL FOLDER

Runs `TOOL FILE`, `TOOL --mlir-print-op-generic FILE` and
`TOOL --canonicalize FILE` on every file of FOLDER (sorted by name). Each run
must end with exit code 1 (a normal failure: not a signal, an abort or a hang)
within the timeout, print a diagnostic containing "error:" on stderr, and print
no crash banner. Prints `OK <name>` or `FAIL <name>: <reason>` per file and a
summary line `malformed: N files, M failures`; exits 1 if any file failed or if
FOLDER holds fewer than MIN_FILES files, so that the check cannot pass
vacuously.
"""

import os
import subprocess
import sys

TIMEOUT_S = 20
MIN_FILES = 20
FLAG_SETS = ([], ["--mlir-print-op-generic"], ["--canonicalize"])
CRASH_MARKERS = ("Stack dump", "PLEASE submit a bug report", "crashed")


def describe_returncode(code):
    if code < 0:
        return "killed by signal %d" % -code
    if code >= 128:
        return "exit code %d (signal %d?)" % (code, code - 128)
    return "exit code %d" % code


def check_run(tool, flags, path):
    """Returns None if the run failed cleanly, else a reason string."""
    cmd = [tool] + flags + [path]
    shown = " ".join(["tool"] + flags + ["FILE"])
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "`%s` timed out after %d s" % (shown, TIMEOUT_S)
    except OSError as exc:
        return "`%s` could not run: %s" % (shown, exc)
    stderr = proc.stderr.decode("utf-8", errors="replace")
    code = proc.returncode
    if code < 0 or code >= 128:
        return "`%s` crashed: %s" % (shown, describe_returncode(code))
    for marker in CRASH_MARKERS:
        if marker in stderr:
            return "`%s` printed %r on stderr (%s)" % (
                shown, marker, describe_returncode(code))
    if code != 1:
        return "`%s` gave %s, expected 1" % (shown, describe_returncode(code))
    if "error:" not in stderr:
        return "`%s` printed no 'error:' diagnostic" % shown
    return None


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: %s TOOL FOLDER\n" % argv[0])
        return 2
    tool, folder = argv[1], argv[2]
    names = sorted(name for name in os.listdir(folder)
                   if os.path.isfile(os.path.join(folder, name)))
    failures = 0
    for name in names:
        path = os.path.join(folder, name)
        reasons = [reason for reason in
                   (check_run(tool, flags, path) for flags in FLAG_SETS)
                   if reason]
        if reasons:
            failures += 1
            print("FAIL %s: %s" % (name, "; ".join(reasons)))
        else:
            print("OK %s" % name)
    print("malformed: %d files, %d failures" % (len(names), failures))
    if len(names) < MIN_FILES:
        print("FAIL: only %d files in %s, expected at least %d" %
              (len(names), folder, MIN_FILES))
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
