"""Imported by thread_config.py: starts a background thread when imported (as some libraries
do), so a process that imported it can no longer be forked faithfully."""
import threading
import time

ticker = threading.Thread(target=lambda: time.sleep(3600), name="ticker", daemon=True)
ticker.start()
SCALE = 2
