ARG VLLM_VERSION=v0.21.0

# Extract torch version from the vLLM base image
FROM vllm/vllm-openai:${VLLM_VERSION} AS torch-version
ARG PYTHON_BIN=python3
RUN ${PYTHON_BIN} -m pip show torch | awk '/Version/{print $2}' | sed 's/+.*$//' > /torch_version.txt

# Builder stage
FROM docker.io/pytorch/manylinux2_28-builder:cuda12.1 AS builder

ARG AIBRIX_REPO=https://github.com/vllm-project/aibrix
ARG AIBRIX_BRANCH=v0.7.0
ARG PYTHON_BIN=python

ENV PATH="/opt/python/cp312-cp312/bin:${PATH}"

# checkout codebase
RUN git clone ${AIBRIX_REPO} /tmp/aibrix && cd /tmp/aibrix && git checkout ${AIBRIX_BRANCH}

# install dependencies
# use the same torch version as vllm
COPY --from=torch-version /torch_version.txt /tmp/torch_version.txt
RUN --mount=type=cache,target=/root/.cache/pip ${PYTHON_BIN} -m pip install torch==$(cat /tmp/torch_version.txt) && rm /tmp/torch_version.txt
RUN --mount=type=cache,target=/root/.cache/pip cd /tmp/aibrix && \
    ${PYTHON_BIN} -m pip install -r python/aibrix_kvcache/requirements/build.txt -r python/aibrix_kvcache/requirements/core.txt

# build aibrix_kvcache
RUN cd /tmp/aibrix && \
    ${PYTHON_BIN} -m build python/aibrix_kvcache --wheel --outdir=python/aibrix_kvcache/dist --no-isolation

# Runtime stage
FROM vllm/vllm-openai:${VLLM_VERSION} AS vllm-openai

ARG PYTHON_BIN=python3
ARG VLLM_VERSION=v0.21.0
ARG NIXL_VERSION=0.7.1

COPY --from=builder /tmp/aibrix /tmp/aibrix

RUN ${PYTHON_BIN} -m pip uninstall -y aibrix_kvcache && \
    ${PYTHON_BIN} -m pip install /tmp/aibrix/python/aibrix_kvcache/dist/*.whl

ARG VLLM_OMNI_VERSION=""
RUN if [ -n "${VLLM_OMNI_VERSION}" ]; then \
      ${PYTHON_BIN} -m pip install --no-cache-dir vllm-omni==${VLLM_OMNI_VERSION}; \
    fi

# apply patch to vLLM (only if patch file exists for this version)
RUN PATCH_FILE="/tmp/aibrix/python/aibrix_kvcache/integration/vllm/patches/vllm_${VLLM_VERSION}-aibrix-kvcache.patch" && \
    if [ -f "$PATCH_FILE" ]; then \
      DIST_DIR=$(${PYTHON_BIN} -m pip show vllm | grep "Location:" | awk '{print $2}') && \
      cd $DIST_DIR && \
      patch -p 1 -l -i $PATCH_FILE; \
    else \
      echo "No patch file for vLLM ${VLLM_VERSION} — using monkey-patch mode"; \
    fi

RUN rm -rf /tmp/aibrix

RUN pip install nixl==${NIXL_VERSION} nixl-cu12==${NIXL_VERSION}
# Install network debugging tools (non-critical — used for NIXL/RDMA debug)
# Package availability varies across base image versions, so we make
# this best-effort.
RUN apt-get update && \
    apt-get install -y --no-install-recommends \
      iproute2 perftest ucx-utils iputils-ping net-tools \
      2>/dev/null || \
    echo "[WARN] Some debug packages not available; continuing" && \
    rm -rf /var/lib/apt/lists/*

ENTRYPOINT ["vllm", "serve"]
