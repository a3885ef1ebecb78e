"""Example target: gives up before any config object exists (exit status 5)."""
import sys

sys.stderr.write("loading plugins\n")
sys.stderr.write("early_exit: fatal: no accelerator found (CUDA_VISIBLE_DEVICES is empty)\n")
sys.exit(5)


class Config:  # never reached
    mode = "auto"
