"""vLLM's record. Its adapter: adapters/vllm.py (tool side), probe/adapters/vllm.py (in the target)."""
from .record import Framework

_SIZES = {"tp": ("--tensor-parallel-size", "-tp"), "pp": ("--pipeline-parallel-size", "-pp"),
          "dp": ("--data-parallel-size", "-dp")}

RECORD = Framework(
    name="vllm",
    label="vLLM",
    summary="vllm serve, python -m vllm.entrypoints.openai.api_server, python -m dynamo.vllm",
    adapter="flagtrace.adapters.vllm:VLLMAdapter",
    scripts=("vllm",),
    # NVIDIA Dynamo's vLLM worker parses its own flags, hands the rest to vLLM's parser and builds vLLM's
    # engine arguments: followed as it is, to vLLM's stop point; its network steps are stood in for
    # (probe/adapters/dynamo.py).
    wrapper_modules=("dynamo.vllm",),
    env=("VLLM_*",),
    preimport=("vllm.engine.arg_utils", "vllm.entrypoints.openai.api_server"),
    setup=("adapters.vllm", "adapters.dynamo"),
    source=("https://github.com/vllm-project/vllm", ""),
    model_options=("--model",),
    optional_model_options=("--tokenizer",),
    positional_model="serve",  # ``vllm serve MODEL``: looked up like --model
    json_model_options={"--speculative-config": "model"},  # the draft model
    # Overlays installed from the pin generator's wheel cache (with pip), rebuilt with the venv (the pin files
    # leave to it what base.txt satisfies), and pip-checked against what the pin file says it leaves out.
    release_env={"smoke_module": "vllm.engine.arg_utils", "pins_module": "flagtrace.adapters.vllm_pins",
                 "wheel_cache": True, "venv_in_key": True, "pip_check": True},
    # ``--release ai-dynamo==1.6.1``: Dynamo's overlay on the vLLM overlay its pin file names
    # (data/env/ai-dynamo/1.6.1.txt: ``#@on vllm==0.25.1``); pin files shipped only, none generated.
    wrapper_releases={"ai-dynamo": {"package": "dynamo.vllm", "smoke_module": "dynamo.vllm.main",
                                    "pins_module": None, "first": (1, 6, 1), "last": (1, 6, 1),
                                    "pip_check": True}},
    tested=("0.11.2", "0.15.1", "0.25.1", "0.33.0", "0.34.0"),
    # The Dynamo operator's multinode vLLM worker (internal/dynamo/backend_vllm.go updateVLLMMultinodeArgs): TP x PP
    # over one node's GPUs runs multiprocessing across nodes, else TP x PP x DP over them runs data parallel.
    multinode_flags={"dynamo.vllm": (
        {"over": ("tp", "pp"), "sizes": _SIZES,
         "flags": ("--distributed-executor-backend", "mp", "--nnodes", "{nodes}", "--master-addr", "{leader}",
                   "--master-port", "29500", "--node-rank", "{rank}"), "worker": ("--headless",),
         "origin": "the Dynamo operator (ai-dynamo/dynamo deploy/operator internal/dynamo/backend_vllm.go "
                   "injectMpDistributedLaunchFlags)"},
        {"over": ("tp", "pp", "dp"), "sizes": _SIZES,
         "flags": ("--data-parallel-hybrid-lb", "--data-parallel-size-local", "{local}", "--data-parallel-start-rank",
                   "{start}", "--data-parallel-address", "{leader}", "--data-parallel-rpc-port", "13445"),
         "origin": "the Dynamo operator (ai-dynamo/dynamo deploy/operator internal/dynamo/backend_vllm.go "
                   "injectDataParallelLaunchFlags)"})},
)
