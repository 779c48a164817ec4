"""An ONNX model and its `tokenizer.json`, opened on the CPU: the one way the sentence
embedder (vectors/onnx_embedder.py) and the local cross-encoder (cross_encoder.py)
load what they run."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_onnx(
    model_path: Path, tokenizer_path: Path, *, threads: int, max_tokens: int
) -> tuple[Any, Any, tuple[str, ...]]:
    """(session, tokenizer truncating to `max_tokens` and padding, the model's input
    names). onnxruntime and tokenizers are imported here, so a process that never
    loads a model never pays for them."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding()
    return session, tokenizer, tuple(i.name for i in session.get_inputs())
