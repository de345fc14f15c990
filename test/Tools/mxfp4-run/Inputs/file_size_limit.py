"""Runs a command with its files limited to BYTES (RLIMIT_FSIZE, SIGXFSZ
ignored, so a write past the limit fails with EFBIG as one past the end of
a full disk fails with ENOSPC) and exits with its status.

    file_size_limit.py BYTES -- COMMAND...
"""
import resource
import signal
import subprocess
import sys

limit = int(sys.argv[1])
command = sys.argv[sys.argv.index("--") + 1:]


def limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


sys.exit(subprocess.run(command, preexec_fn=limited).returncode)
