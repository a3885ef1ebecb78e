"""The charts flagtrace renders itself from their values, without helm: what each chart's templates make of
the values, written out in Python (no template engine), one module per chart. readers/chart_values.py
recognises a chart's values file and asks its module (a Chart: its defaults, recognise, render).

- ``production_stack.py``: vLLM production-stack (``servingEngineSpec.modelSpec[]``);
- ``llm_d_modelservice.py``: llm-d-modelservice (``modelArtifacts`` with ``decode``/``prefill``);
- ``common.py``: what they share: the values view (Values), helm's printing of a value (go, yaml_text), the env
  entries a template writes, a container's GPUs, the Launch of a rendered container, what a chart refuses
  (Refused), the Chart record.

A chart module imports common.py and the modules of deploy/ below the readers, never a reader."""
