#!/usr/bin/env python3
# The end of e2e/tests/security-escapes.test.mjs's fork bomb, run in the sandbox as the bomb's user before the bomb
# starts: it forks nothing (at the pids limit nothing can), waits for STOP_FILE (written through envd, which needs no
# fork either) or 30 s, then SIGKILLs every process of its user (kill(-1) reaches only its own pid namespace) until
# /proc lists none, and creates DONE_FILE.
#
#   python3 escape-reaper.py STOP_FILE DONE_FILE
import os
import signal
import sys
import time

stop_file, done_file = sys.argv[1], sys.argv[2]
deadline = time.time() + 30
while not os.path.exists(stop_file) and time.time() < deadline:
    time.sleep(0.05)


def others():
    """Processes of this user besides this one (kill(-1) succeeds while any process is visible, so it cannot tell)."""
    mine = f'Uid:\t{os.getuid()}\t'
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/status') as status:
                if int(pid) != os.getpid() and mine in status.read():
                    found.append(pid)
        except OSError:
            pass  # gone meanwhile
    return found


while others():
    os.kill(-1, signal.SIGKILL)
    time.sleep(0.05)
open(done_file, 'w').close()
