"""A tiny BERT-shaped ONNX model and tokenizer, built here so no weights are downloaded.

The model maps (input_ids, attention_mask) to a hidden state per token:
    hidden[b, t] = E[ids[b, t]] + sum over unmasked tokens s of F[ids[b, s]]
so the first (CLS) position sees the whole sentence, like a real encoder's CLS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
CHARS = list("小明学吉他老周儿子出生今天气不错猫粮抽烟驾照考试去哪了吗")
DIM = 8


def build_tiny_model(folder: Path, *, seed: int = 0, with_token_types: bool = False) -> np.ndarray:
    """Writes model.onnx + tokenizer.json into `folder`; returns (E, F) stacked."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate(SPECIAL + CHARS)}
    rng = np.random.default_rng(seed)
    tables = rng.normal(size=(2, len(vocab), DIM)).astype(np.float32)

    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(handle_chinese_chars=True, lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.save(str(folder / "tokenizer.json"))

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"]),
    ]
    if with_token_types:
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["b", "s"])
        )
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["own"]),
        helper.make_node("Gather", ["F", "input_ids"], ["ctx_tokens"]),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["ctx_tokens", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["ctx"], keepdims=1),
        helper.make_node("Add", ["own", "ctx"], ["last_hidden_state"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-encoder",
        inputs,
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", DIM])],
        initializer=[
            numpy_helper.from_array(tables[0], "E"),
            numpy_helper.from_array(tables[1], "F"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return tables


def expected_vector(folder: Path, tables: np.ndarray, text: str) -> np.ndarray:
    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids
    cls = tables[0][ids[0]] + tables[1][ids].sum(axis=0)
    return cls / np.linalg.norm(cls)
