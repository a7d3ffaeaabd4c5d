#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A program for the launcher test: exits with a status, dies of a signal, or waits for signals
# and records each one it receives in a marker file.
import os
import signal
import sys
import time

mode = sys.argv[1]
if mode == "exit":
    sys.exit(int(sys.argv[2]))
elif mode == "signal":
    sig = getattr(signal, "SIG" + sys.argv[2])
    if sig != signal.SIGKILL:
        signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    time.sleep(10)
    sys.exit(1)
elif mode == "wait":
    marker = sys.argv[2]
    received = []

    def on_signal(sig, frame):
        received.append(sig)
        with open(marker, "a") as f:
            f.write(signal.Signals(sig).name + "\n")

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    with open(marker, "w") as f:
        f.write("ready\n")
    end = time.time() + 20
    while not received and time.time() < end:
        time.sleep(0.01)
    # Stay a little longer so a second, duplicated delivery would be seen.
    time.sleep(0.5)
    sys.exit(40 + received[0] if received else 1)
sys.exit(2)
