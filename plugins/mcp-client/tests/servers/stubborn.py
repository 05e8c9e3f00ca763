"""Never answers and ignores stdin closing and SIGTERM; only SIGKILL of its group ends it."""

import signal
import subprocess
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
# a grandchild in the same process group must die with it
subprocess.Popen(
    [
        sys.executable,
        "-c",
        "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
    ]
)
print("stubborn server up", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
