"""Runs a command that cannot write into DIR (its files stay readable) and
exits with its status: DIR's write permission is taken away for the run.
Root writes anywhere through CAP_DAC_OVERRIDE, so as root the command also
runs without it (and without CAP_DAC_READ_SEARCH), dropped from its
capability bounding set: it stays root, so every path it reads stays
readable wherever the tree lives.

    read_only.py DIR -- COMMAND...
"""
import ctypes
import os
import stat
import subprocess
import sys

folder = sys.argv[1]
command = sys.argv[sys.argv.index("--") + 1:]
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def drop():
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


mode = stat.S_IMODE(os.stat(folder).st_mode)
os.chmod(folder, mode & ~0o222)
try:
    status = subprocess.run(
        command, preexec_fn=drop if os.geteuid() == 0 else None).returncode
finally:
    os.chmod(folder, mode)
sys.exit(status)
