"""SGLang's record. Its adapter: adapters/sglang.py (tool side), probe/adapters/sglang.py (in the target)."""
from .record import Framework

RECORD = Framework(
    name="sglang",
    label="SGLang",
    summary="python -m sglang.launch_server, sglang serve, python -m dynamo.sglang",
    adapter="flagtrace.adapters.sglang:SGLangAdapter",
    scripts=("sglang",),
    # NVIDIA Dynamo's SGLang worker parses its own flags and SGLang's (ServerArgs.add_cli_args), sets some of
    # SGLang's on the parsed namespace and builds ServerArgs.from_cli_args itself: followed as it is, to
    # SGLang's stop point; its network steps are stood in for (probe/adapters/dynamo.py). ``--release
    # ai-dynamo==1.6.1`` (vLLM's wrapper release) runs it on the SGLang overlay its pin file names for this
    # module (data/env/ai-dynamo/1.6.1.txt: ``#@on sglang==0.5.21 dynamo.sglang``).
    wrapper_modules=("dynamo.sglang",),
    env=("SGLANG_*", "SGL_*"),
    preimport=("sglang.srt.server_args",),
    setup=("adapters.dynamo", "adapters.sglang"),  # Dynamo's first: it may swap the overlay SGLang is found in
    source=("https://github.com/sgl-project/sglang", "python"),
    model_options=("--model-path", "--model"),
    other_model_options=("--speculative-draft-model-path", "--speculative-draft-model"),
    optional_model_options=("--tokenizer-path",),
    device_options=("--disaggregation-ib-device",),
    cpu_target=(("--device", "cpu"),),
    release_env={"smoke_module": "sglang.srt.server_args", "pins_module": "flagtrace.adapters.sglang_pins"},
    tested=("0.4.5", "0.4.6.post5", "0.4.10.post2", "0.5.3", "0.5.6", "0.5.9", "0.5.10.post1", "0.5.11", "0.5.12",
            "0.5.13", "0.5.15", "0.5.19", "0.5.21", "0.5.23"),  # 0.5.21: under ai-dynamo 1.6.1's dynamo.sglang
    multinode_flags={"dynamo.sglang": (
        {"flags": ("--dist-init-addr", "{leader}:29500", "--nnodes", "{nodes}", "--node-rank", "{rank}"),
         "origin": "the Dynamo operator (ai-dynamo/dynamo deploy/operator internal/dynamo/backend_sglang.go "
                   "getMultinodeFlags)"},)},
)
