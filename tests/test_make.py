"""The newcomer's two commands: ``make demo`` builds only the release it shows."""
import re
import shutil
import subprocess

import pytest

from ft_support import ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_demo_builds_one_release():
    plan = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    builds = re.findall(r"flagtrace env build --root \S+ sglang==([\d.]+\S*)", plan)
    shows = re.findall(r"scripts/demo\.sh ([\d.]+\S*)", plan)
    assert len(builds) == 1 and builds == shows, plan
    assert "vllm==" not in plan
