"""Issue 38's measure: 60 real public deployment files nobody here wrote (tests/deploy_corpus/, a SOURCES.md row
each: repository, path, commit), over every form -f reads. Read statically (no framework runs): every file gives
its server commands, or a row of its own with one line (file:line), or is listed with why nothing was taken;
nothing raises. The files whose commands are not found yet are listed, so that one found later (or lost) shows."""
import os

from flagtrace.deploy.launch import read_paths

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deploy_corpus")
# Files whose commands are not found yet (docs/deployment.md says why): none since KServe, KubeRay and AIBrix.
NOT_FOUND_YET = set()
# Files read as part of another object that names them (an OME runtime and model under the InferenceService).
READ_UNDER = {"ome/srt-deepseek-rdma-pd-clusterservingruntime.yaml", "ome/clusterbasemodel-deepseek-v3.yaml"}
# Dockerfiles whose ENTRYPOINT takes its arguments where the image runs: one line saying so.
ENTRYPOINTS = {"dockerfile/aibrix-vllm.Dockerfile", "dockerfile/llm-d-vllm-nixl.Dockerfile"}
# Values files of charts flagtrace renders itself (deploy/readers/chart_values.py): each gives its commands.
RENDERED_VALUES = {"helm/llm-d-modelservice-values-heterogeneous-pd.yaml", "helm/llm-d-modelservice-values-pd.yaml",
                   "helm/vllm-production-stack-values-04-multiple-models.yaml",
                   "helm/vllm-production-stack-values-15-pipeline-parallel-raycluster.yaml",
                   "helm/vllm-production-stack-values-16-disagg-prefill.yaml"}


def test_every_corpus_file_is_answered_or_says_why():
    reads = {os.path.relpath(r.path, CORPUS): r for r in read_paths([CORPUS])}
    assert len(reads) == 61 and reads["SOURCES.md"].skipped.startswith("not a form flagtrace reads")
    found, rows, skipped = set(), set(), set()
    for name, read in reads.items():
        if name == "SOURCES.md":
            continue
        if any(l.tokens for l in read.launches):
            found.add(name)
        elif read.launches:
            assert all(l.problem.startswith("-f ") for l in read.launches), name
            rows.add(name)
        else:
            assert read.skipped, name
            skipped.add(name)
    assert rows == ENTRYPOINTS  # one line each, where the args are (the values files were such rows before)
    assert skipped == NOT_FOUND_YET | READ_UNDER
    assert all(reads[name].skipped.startswith("read under InferenceService/deepseek-v3") for name in READ_UNDER)
    assert RENDERED_VALUES <= found and len(found) == 56
    # each line of every command found says where it came from
    for name in found:
        for launch in reads[name].launches:
            assert all(t.origin for t in launch.tokens), name
