"""Reader of the values files of two charts, rendered here without helm: what the chart's templates make of the
values, written out in Python (no template engine). vLLM production-stack (``servingEngineSpec.modelSpec[]``:
one Deployment per enabled entry, a RayCluster for ``raySpec.enabled``) and llm-d-modelservice
(``modelArtifacts`` with the ``decode``/``prefill`` containers, ``modelCommand`` vllmServe / imageDefault /
custom). Each container that runs a framework is a Launch: its command and args as the chart renders them,
each word's origin the values key and file:line it came from (or the chart's default, or the chart template
that writes it), its env, the image's release, its GPU count. The values are the chart's defaults merged with
the file as helm merges them (a map key by key; a list replaces the whole list) and print as helm prints them
(every number a float64: 1000000 is 1e+06). A values file of any other chart is not recognised (launch.py
gives it one row with the helm command). Each chart's templates are written out in its module of deploy/charts/;
this reader recognises a chart's values and renders them with that module."""
from ..charts import llm_d_modelservice, production_stack
from ..charts.common import RELEASE, Refused, Values
from ..model import unreadable
from ..shell_script import SHELL_SUFFIXES

FORM = "a Helm values file of vLLM production-stack or llm-d-modelservice (rendered by flagtrace)"
CHARTS = (production_stack.STACK, llm_d_modelservice.LLM_D)


def recognises(artifact):
    """A single mapping, no ``kind``, shaped as one of the two charts' values."""
    return not artifact.source.lower().endswith(SHELL_SUFFIXES) and _chart_of(artifact) is not None


def read(artifact):
    chart = _chart_of(artifact)
    values = Values.of(chart, artifact)
    try:
        launches = chart.render(values)
    except Refused as refused:
        return [unreadable(artifact.source, "the values file", "-f %s: helm template fails on these values: %s (chart "
                           "template %s, %s %s)" % (artifact.source, refused.args[0], refused.args[1], chart.label,
                                                    chart.version))]
    for launch in launches:
        launch.notes.append("rendered by flagtrace from the chart's templates (%s chart %s at %s), not by helm; check "
                            "with: helm template %s %s -f %s | flagtrace check -f -" % (
                                chart.label, chart.version, chart.commit, RELEASE, chart.reference, artifact.source))
    return launches


def _chart_of(artifact):
    documents = artifact.documents
    if len(documents) != 1 or not isinstance(documents[0], dict) or {"kind", "apiVersion"} & set(documents[0]):
        return None
    return next((chart for chart in CHARTS if chart.recognise(documents[0])), None)
