"""Variants of another simulated GPU from the same import, where the importing process itself can no
longer stand for that GPU.

The variant engine (variants.py) imports what resolution imports lazily into its process, to make
each child cheap; a module imported then may read the GPU at module level (SGLang 0.5.23 keeps the
compute capability of the device in constants), after which that process cannot stand for another
GPU tier. ``BaseFork`` is a fork of the process taken before those imports, when only the
framework's entry modules are loaded. Asked for variants of a GPU, it keeps one process per GPU
(forked from it, where nothing asked during the entry import would differ there): that process
switches the simulation, imports what the parent imported since, and runs the variants as the
parent would (their progress lines, their traces). Each such process lives until the parent is done.

Protocol, one JSON line each way: the parent writes ``{"gpu": PROFILE, "todo": [[index, variant]],
"names": [modules], "timeout": s, "parallel": n}`` and reads ``{"results": {index: result}}``.

Standard library only, Python >= 3.9.
"""
import json
import os
import sys


def profile_key(profile):
    """One simulated GPU profile, as a key."""
    return json.dumps(profile, sort_keys=True)


class BaseFork:
    def __init__(self, probe, run, import_all):
        """``run(probe, todo, results, timeout, parallel, conflicts)``: how a process runs variants
        (variants._run); ``import_all(names)``: how it imports what the parent imported since."""
        self.base = set(sys.modules)
        requests_r, requests_w = os.pipe()
        answers_r, answers_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            os.close(requests_w)
            os.close(answers_r)
            _serve(probe, run, import_all, requests_r, answers_w)
        os.close(requests_r)
        os.close(answers_w)
        self.pid = pid
        self.requests = os.fdopen(requests_w, "w", encoding="utf-8")
        self.answers = os.fdopen(answers_r, encoding="utf-8")

    def run(self, profile, todo, timeout, parallel):
        """Run ``todo`` ([(index, variant)]) under ``profile``; {index: result} (missing: not run)."""
        names = sorted(n for n in sys.modules if n not in self.base)
        try:
            self.requests.write(json.dumps({"gpu": profile, "todo": todo, "names": names, "timeout": timeout,
                                            "parallel": parallel}) + "\n")
            self.requests.flush()
            line = self.answers.readline()
            return {int(k): v for k, v in json.loads(line)["results"].items()} if line else {}
        except (OSError, ValueError):
            return {}

    def close_in_child(self):
        """A variant forked from the parent holds no end of these pipes."""
        for fh in (self.requests, self.answers):
            try:
                os.close(fh.fileno())
            except OSError:
                pass

    def close(self):
        for fh in (self.requests, self.answers):
            try:
                fh.close()
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _serve(probe, run, import_all, requests_fd, answers_fd):
    """The base fork: a process per GPU, each job relayed to it; ends when the parent is done."""
    code = 0
    workers = {}  # profile key -> (pid, requests, answers)
    try:
        with os.fdopen(requests_fd, encoding="utf-8") as requests, os.fdopen(answers_fd, "w", encoding="utf-8") as answers:
            for line in requests:
                job = json.loads(line)
                key = profile_key(job["gpu"])
                if key not in workers:  # its pipes to the parent and the other workers: not the new one's
                    held = [requests_fd, answers_fd] + [fh.fileno() for w in workers.values() for fh in w[1:]]
                    workers[key] = _start(probe, run, import_all, job["gpu"], held)
                _, to_worker, from_worker = workers[key]
                to_worker.write(line)
                to_worker.flush()
                answers.write(from_worker.readline() or '{"results": {}}\n')
                answers.flush()
    except BaseException:  # noqa: BLE001 - the parent reads no answer and reports the variants as not run
        code = 70
    finally:
        for pid, to_worker, from_worker in workers.values():
            for fh in (to_worker, from_worker):
                try:
                    fh.close()
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        probe._real_exit(code)


def _start(probe, run, import_all, profile, held):
    """A worker for ``profile``; ``held``: descriptors of this process the worker must not keep open
    (a pipe whose write end it held would never reach its end)."""
    requests_r, requests_w = os.pipe()
    answers_r, answers_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in [requests_w, answers_r] + held:
            try:
                os.close(fd)
            except OSError:
                pass
        _worker(probe, run, import_all, profile, requests_r, answers_w)
    os.close(requests_r)
    os.close(answers_w)
    return pid, os.fdopen(requests_w, "w", encoding="utf-8"), os.fdopen(answers_r, encoding="utf-8")


def _worker(probe, run, import_all, profile, requests_fd, answers_fd):
    """The process standing for one GPU: switched, then the parent's later imports, then its variants."""
    code = 0
    try:
        why = probe.simulation.conflict(profile)
        if not why:
            probe.simulation.switch(profile)
        with os.fdopen(requests_fd, encoding="utf-8") as requests, os.fdopen(answers_fd, "w", encoding="utf-8") as answers:
            for line in requests:
                job = json.loads(line)
                results = {}
                if why:
                    for index, _ in job["todo"]:
                        results[index] = {"status": "unshared", "why": why, "returncode": None, "seconds": 0.0}
                else:
                    import_all(job["names"])
                    run(probe, [tuple(item) for item in job["todo"]], results, job["timeout"], job["parallel"], {})
                answers.write(json.dumps({"results": results}) + "\n")
                answers.flush()
    except BaseException:  # noqa: BLE001 - the parent reports the variants as not run
        code = 70
    finally:
        probe._real_exit(code)
