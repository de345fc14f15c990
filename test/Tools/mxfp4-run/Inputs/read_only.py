"""Runs a command that cannot write into DIR (its files stay readable) and
exits with its status. As root, which writes anywhere, the command runs as
the unprivileged user `nobody` over DIR (owned by root, mode 0755); else
DIR's write permission is taken away for the command's run.

    read_only.py DIR -- COMMAND...
"""
import os
import stat
import subprocess
import sys

folder = sys.argv[1]
command = sys.argv[sys.argv.index("--") + 1:]
mode = stat.S_IMODE(os.stat(folder).st_mode)
if os.geteuid() == 0:
    os.chmod(folder, 0o755)
    nobody = 65534

    def drop():
        os.setgroups([])
        os.setgid(nobody)
        os.setuid(nobody)
    status = subprocess.run(command, preexec_fn=drop).returncode
else:
    os.chmod(folder, mode & ~0o222)
    try:
        status = subprocess.run(command).returncode
    finally:
        os.chmod(folder, mode)
sys.exit(status)
