"""Decisions and errors of real vLLM releases that read an environment variable through
``vllm.envs``: the variable, its value and where it came from are in the explanation."""
import pytest

from vllm_support import LLAMA31, line_in, releases, run_vllm

NEW = [v for v in ("0.33.0", "0.34.0") if v in releases()]


def env_reads(item):
    return {r["env"]: r for r in item["reads"] if "env" in r}


@pytest.mark.parametrize("version", NEW)
def test_max_model_len_over_the_model_limit_names_the_unset_variable(version):
    run = run_vllm(version, [LLAMA31, "--max-model-len", "262144"], env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": None})
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert error["type"] == "ValidationError"
    # pydantic re-raised the validator's ValueError by message: the site is vLLM's own raise
    assert error["site"]["func"] == "_get_and_verify_max_len"
    assert error["site"]["line"] == line_in(version, "config/model.py", "_get_and_verify_max_len",
                                            "To allow overriding this maximum") - 1
    assert error["conditions"][-1]["text"] == "not (envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN)"
    assert env_reads(error)["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] == {
        "env": "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "value": None, "origin": "unset"}
    locals_ = {r["local"]: r["value"]["repr"] for r in error["reads"] if "local" in r}
    assert locals_["max_model_len"] == "262144" and locals_["derived_max_model_len"] == "131072.0"


@pytest.mark.parametrize("version", NEW)
def test_the_variable_set_lets_the_request_stick(version):
    run = run_vllm(version, [LLAMA31, "--max-model-len", "262144"], env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    assert run.rc == 0, run
    f = run.field("model_config.max_model_len")
    assert f["verdict"] == "honoured" and f["final"]["value"] == 262144


@pytest.mark.parametrize("version", NEW)
def test_data_parallel_size_from_the_environment_explains_the_dense_model_error(version):
    run = run_vllm(version, [LLAMA31], env={"VLLM_DP_SIZE": "2"})
    assert run.rc == 2 and "Traceback" not in run.err
    error = run.doc["error"]
    assert error["site"]["func"] == "ParallelConfig.__post_init__"
    assert error["site"]["file"].endswith("vllm/config/parallel.py")
    assert error["site"]["line"] == line_in(version, "config/parallel.py", "__post_init__",
                                            '"Offline data parallel mode is not supported/useful"') - 1
    assert error["conditions"][-1]["text"] == "self.data_parallel_size > 1 and self.is_moe_model is False"
    [dp] = [r for r in error["reads"] if r.get("field") == "parallel_config.data_parallel_size"]
    assert dp["value"]["value"] == 2 and dp["origin"] == "decided"
    assert dp["set_by"]["func"] == "ParallelConfig.__post_init__"
    assert dp["set_by"]["line"] == line_in(version, "config/parallel.py", "__post_init__",
                                           "self.data_parallel_size = envs.VLLM_DP_SIZE")
    assert dp["from_env"] == [{"env": "VLLM_DP_SIZE", "value": "'2'", "origin": "environment"}]
