"""The architectures a filter or relevance model can be trained as, one class each.

Each class says how its torch model is built from a base, how it scores a batch of
(question, text) pairs while training (z = log P(true) − log P(false)), which loss the
filter uses, what the exported directory needs besides the converted weights, and which
CTranslate2 backend (:data:`ragctl.models.ct2.BACKENDS`) scores it at run time:

- :class:`BiEncoder` (``ct2-bi-encoder``): an encoder embeds question and text apart (mean
  pooling, unit length, as sentence-transformers does) and z = w₁·cos + w₂·overlap + b,
  overlap being the share of the question's content words in the text. Initialised so
  that its ranking is the similarity fallback's, then fine-tuned;
- :class:`Seq2Seq` (``ct2-seq2seq``): a T5-style model that generates "true" or "false";
- :class:`Decoder` (``ct2-decoder``): a causal LM (the SmolLM2 GGUF, loaded by
  transformers, or a local Hugging Face causal LM) whose next word is " true" or " false";
- :class:`SpanReader` (``ct2-span``): the answer's start and end in a passage
  (:mod:`.reader`), scored at run time by :mod:`ragctl.answer`.

(A cross-encoder on MiniLM was tried and lost to the similarity fallbacks by 16 points of
recall on 540–2,160 CPU training questions; it was removed.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ragctl.errors import RagctlError
from ragctl.models.filter import SIMILARITY_WEIGHT
from ragctl.models.relevance import SIMILARITY_CENTER, SIMILARITY_SCALE
from ragctl.text import first_words, overlap

DEFAULT_PROMPT = "Question: {a} Context: {b} Relevant:"
BI_FEATURES = ("cosine", "overlap")
# Bi-encoder start: the similarity fallbacks' scores as logits. Filter: SimilarityFilter's
# w·cos + (1 − w)·overlap, scaled by 20 and centred on a score of 0.5; relevance:
# SimilarityRelevance's (cos − center) / scale.
FILTER_SCALE = 20.0
BI_INIT = {
    "filter": ((FILTER_SCALE * SIMILARITY_WEIGHT, FILTER_SCALE * (1 - SIMILARITY_WEIGHT)),
               -FILTER_SCALE / 2),
    "re": ((1 / SIMILARITY_SCALE, 0.0), -SIMILARITY_CENTER / SIMILARITY_SCALE),
}


class Architecture:
    """What one kind of model needs to be trained, saved, exported and scored."""

    name: ClassVar[str]
    backend: ClassVar[str]  # the CTranslate2 backend that scores it at run time
    encoder: ClassVar[bool] = False  # an encoder: GPTQ rounding applies to it
    learning_rate: ClassVar[float] = 2e-5
    filter_objective: ClassVar[str] = "silver-bce"

    def build(self, scorer: Any, path: Path, gguf: str | None, opts: Any) -> None:
        """Load the base into ``scorer.model`` (and ``scorer.head``)."""
        raise NotImplementedError

    def logits(self, scorer: Any, pairs: Sequence[tuple[str, str]]) -> Any:
        raise NotImplementedError

    def head_arrays(self, scorer: Any) -> dict[str, Any] | None:
        """What ``head.npz`` holds for this architecture (None: no head file)."""
        return None

    def prompt(self) -> str | None:
        """The prompt template the exported model is scored with, if any."""
        return None


class BiEncoder(Architecture):
    name = "bi-encoder"
    backend = "ct2-bi-encoder"
    encoder = True
    filter_objective = "silver-listwise"

    def build(self, scorer: Any, path: Path, gguf: str | None, opts: Any) -> None:
        from transformers import AutoModel

        torch = scorer.torch
        scorer.model = AutoModel.from_pretrained(str(path))
        if opts.layers:
            layers = scorer.model.encoder.layer
            if not 1 <= opts.layers <= len(layers):
                raise RagctlError(f"--layers must be 1..{len(layers)}")
            scorer.model.encoder.layer = layers[:opts.layers]
            scorer.model.config.num_hidden_layers = opts.layers
        torch.manual_seed(opts.seed)
        scorer.head = torch.nn.Linear(2, 1)
        w, b = BI_INIT[opts.kind]
        with torch.no_grad():
            scorer.head.weight.copy_(torch.tensor([w]))
            scorer.head.bias.fill_(b)

    def embed(self, scorer: Any, texts: Sequence[str]) -> Any:
        """Unit-length mean-pooled embeddings."""
        enc = scorer.tokenizer(list(texts), truncation=True, max_length=scorer.max_length,
                               padding=True, return_tensors="pt").to(scorer.device)
        states = scorer.model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return scorer.torch.nn.functional.normalize(pooled, dim=-1)

    def logits(self, scorer: Any, pairs: Sequence[tuple[str, str]]) -> Any:
        torch = scorer.torch
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        vecs = self.embed(scorer, texts)
        qa = torch.tensor([index[a] for a, _ in pairs], device=scorer.device)
        qb = torch.tensor([index[b] for _, b in pairs], device=scorer.device)
        cos = (vecs[qa] * vecs[qb]).sum(-1)
        lex = torch.tensor([overlap(a, b) for a, b in pairs], dtype=cos.dtype,
                           device=scorer.device)
        return scorer.head(torch.stack([cos, lex], dim=-1)).squeeze(-1)

    def head_arrays(self, scorer: Any) -> dict[str, Any] | None:
        return {"weight": scorer.head.weight.detach().cpu().numpy().astype(np.float32),
                "bias": scorer.head.bias.detach().cpu().numpy().astype(np.float32),
                "pooling": np.array("mean"), "features": np.array(BI_FEATURES)}


class _Generative(Architecture):
    """Scores the words "true" and "false" after a prompt."""

    prefix: ClassVar[str] = " "

    def prompt(self) -> str | None:
        return DEFAULT_PROMPT

    def finish(self, scorer: Any) -> None:
        tok = scorer.tokenizer
        scorer.head = None
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        scorer.true_id = _first_id(tok, self.prefix + "true")
        scorer.false_id = _first_id(tok, self.prefix + "false")

    def prompts(self, scorer: Any, pairs: Sequence[tuple[str, str]]) -> list[str]:
        return [DEFAULT_PROMPT.format(a=a, b=first_words(b, scorer.max_words)) for a, b in pairs]


class Seq2Seq(_Generative):
    name = "seq2seq"
    backend = "ct2-seq2seq"
    prefix = ""

    def build(self, scorer: Any, path: Path, gguf: str | None, opts: Any) -> None:
        from transformers import AutoModelForSeq2SeqLM

        scorer.model = AutoModelForSeq2SeqLM.from_pretrained(str(path))
        self.finish(scorer)

    def logits(self, scorer: Any, pairs: Sequence[tuple[str, str]]) -> Any:
        torch = scorer.torch
        prompts = self.prompts(scorer, pairs)
        enc = scorer.tokenizer(prompts, truncation=True, max_length=scorer.max_length,
                               padding=True, return_tensors="pt").to(scorer.device)
        start = scorer.model.config.decoder_start_token_id or 0
        dec = torch.full((len(prompts), 1), start, dtype=torch.long, device=scorer.device)
        out = scorer.model(**enc, decoder_input_ids=dec).logits[:, 0, :]
        return out[:, scorer.true_id] - out[:, scorer.false_id]


class Decoder(_Generative):
    name = "decoder"
    backend = "ct2-decoder"

    def build(self, scorer: Any, path: Path, gguf: str | None, opts: Any) -> None:
        from transformers import AutoModelForCausalLM

        kw: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
        scorer.model = AutoModelForCausalLM.from_pretrained(str(path), **kw)
        if gguf:  # dequantized to float on load: save it as a plain model
            scorer.model.hf_quantizer = None
            scorer.model.is_quantized = False
            if hasattr(scorer.model.config, "quantization_config"):
                del scorer.model.config.quantization_config
        self.finish(scorer)

    def logits(self, scorer: Any, pairs: Sequence[tuple[str, str]]) -> Any:
        torch = scorer.torch
        tok = scorer.tokenizer
        prompts = self.prompts(scorer, pairs)
        tok.padding_side = "right"
        enc = tok(prompts, truncation=True, max_length=scorer.max_length, padding=True,
                  return_tensors="pt").to(scorer.device)
        full = scorer.model(**enc).logits
        last = enc["attention_mask"].sum(1) - 1
        out = full[torch.arange(len(prompts), device=scorer.device), last]
        return out[:, scorer.true_id] - out[:, scorer.false_id]


class SpanReader(Architecture):
    """The span reader (:mod:`.reader`): an encoder reads question and passage together and
    a head gives each token a start and an end logit; it has its own training loop."""

    name = "span-reader"
    backend = "ct2-span"
    encoder = True


class PairClassifier(Architecture):
    """The entailment model (:mod:`.entail`): an encoder reads premise and hypothesis
    together; a head over the mean of its token states gives entailment, neutral and
    contradiction logits; it has its own training loop."""

    name = "pair-classifier"
    backend = "ct2-pair"
    encoder = True


ARCHITECTURES: dict[str, type[Architecture]] = {
    a.name: a for a in (BiEncoder, Seq2Seq, Decoder, SpanReader, PairClassifier)}
GGUF_BASES = ("smollm2", "smollm2-135m")


def _first_id(tokenizer: Any, word: str) -> int:
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    if not ids:
        raise RagctlError(f"the base tokenizer cannot encode {word!r}")
    return int(ids[0])


def resolve_base(base: str) -> tuple[str, Path, str | None]:
    """(architecture, directory, gguf file name or None) for a base name or directory:
    ``minilm`` (the installed embedder), ``smollm2`` or a ``.gguf`` file (a generator of
    the registry), or a local Hugging Face model directory."""
    from ragctl.models import registry as models

    if models.spec("embedder", base) is not None:
        return BiEncoder.name, models.locate("embedder", base), None
    if base in GGUF_BASES or base.endswith(".gguf"):
        gguf = models.locate("generator", "smollm2-135m" if base in GGUF_BASES else base)
        return Decoder.name, gguf.parent, gguf.name
    path = Path(base).expanduser()
    if not path.is_dir():
        raise RagctlError(f"base {base!r} is not 'minilm', 'smollm2', a .gguf file or a "
                          f"model directory")
    config = path / "config.json"
    if not config.exists():
        raise RagctlError(f"{path} is not a Hugging Face model directory (no config.json)")
    try:
        cfg = json.loads(config.read_text())
    except ValueError as e:
        raise RagctlError(f"{config} is not valid JSON: {e}") from None
    if cfg.get("is_encoder_decoder"):
        return Seq2Seq.name, path, None
    archs = " ".join(cfg.get("architectures") or [])
    if "CausalLM" in archs or cfg.get("model_type") in ("llama", "gpt2", "mistral", "qwen2",
                                                         "gemma", "gemma3_text", "phi"):
        return Decoder.name, path, None
    return BiEncoder.name, path, None


def resolve_architecture(base: str, architecture: str = "auto"
                         ) -> tuple[Architecture, Path, str | None]:
    """The architecture a base is trained as (``auto``: what :func:`resolve_base` says)."""
    name, path, gguf = resolve_base(base)
    if architecture not in ("auto", name):
        if architecture not in ARCHITECTURES:
            raise RagctlError(f"architecture must be auto or one of {', '.join(ARCHITECTURES)}")
        raise RagctlError(f"base {base!r} is a {name} model; it cannot be trained as a "
                          f"{architecture}")
    return ARCHITECTURES[name](), path, gguf
