"""A tiny cross-encoder and its tokenizer, built here so no weights are downloaded.

The pair is tokenised as `[CLS] question [SEP] memory [SEP]` (token types 0, then 1)
and the one-logit head is

    logit[b] = sum over unmasked tokens t of W[ids[b, t]] * (1 + type[b, t])

so a memory's characters count twice: loading, tokenising and every input are used.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
CHARS = list("小明红从九月开始学吉他喜欢吃火锅什么时候的是雅马哈")


def build_cross_encoder(folder: Path, *, seed: int = 0) -> np.ndarray:
    """Writes model.onnx + tokenizer.json; returns W (one weight per token)."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate(SPECIAL + CHARS)}
    weights = np.random.default_rng(seed).normal(scale=0.3, size=(len(vocab), 1))
    weights = weights.astype(np.float32)
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(handle_chinese_chars=True, lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["b", "s"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    nodes = [
        helper.make_node("Gather", ["W", "input_ids"], ["w"]),  # (b, s, 1)
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["types", "one"], ["twice"]),
        helper.make_node("Mul", ["mask", "twice"], ["factor"]),
        helper.make_node("Unsqueeze", ["factor", "axis2"], ["factor3"]),
        helper.make_node("Mul", ["w", "factor3"], ["parts"]),
        helper.make_node("ReduceSum", ["parts", "axis1"], ["summed"], keepdims=0),
        helper.make_node("Identity", ["summed"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        inputs,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", 1])],
        initializer=[
            numpy_helper.from_array(weights, "W"),
            numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return weights


def expected_score(folder: Path, weights: np.ndarray, question: str, memory: str) -> float:
    encoding = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(question, memory)
    logit = sum(
        float(weights[i, 0]) * (1 + t) for i, t in zip(encoding.ids, encoding.type_ids, strict=True)
    )
    return 1.0 / (1.0 + np.exp(-logit))
