docker run --gpus all \
    -p 8000:8000 \
    --ipc=host \
    vllm/vllm-openai \
    --model openai/gpt-oss-20b
