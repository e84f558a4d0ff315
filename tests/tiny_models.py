"""Tiny random models built on the spot, converted with CTranslate2's real converter.

They exercise the real export and loading paths without any model download.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WORDS = ("question context relevant true false the cat sat on mat what where who a is "
         "dentist appointment thursday rent euros lisbon office company train porto").split()


def _convert(src: Path, out: Path) -> None:
    from ctranslate2.converters import TransformersConverter

    TransformersConverter(str(src)).convert(str(out), quantization="float32", force=True)


def _manifest(out: Path, backend: str, kind: str, **extra: object) -> None:
    (out / "manifest.json").write_text(json.dumps(
        {"kind": kind, "backend": backend, "name": out.name, "max_length": 128, **extra}))


def hf_bert(src: Path, *, seed: int = 0, extra_words: tuple[str, ...] = ()) -> Path:
    """A 2-layer random BERT with a word-list tokenizer, saved in Hugging Face layout."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    src.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *extra_words, *WORDS]
    (src / "vocab.txt").write_text("\n".join(vocab))
    tok = BertTokenizerFast(str(src / "vocab.txt"))
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
                     position_embedding_type="absolute")
    torch.manual_seed(seed)
    BertModel(cfg).eval().save_pretrained(str(src))
    tok.save_pretrained(str(src))
    return src


def hf_t5(src: Path, *, seed: int = 0) -> Path:
    """A 1-layer random T5 with a word-level tokenizer, saved in Hugging Face layout."""
    import torch
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    t, vocab = _word_tokenizer(["<pad>", "</s>", "<unk>"], "$A </s>", [("</s>", 1)])
    tok = PreTrainedTokenizerFast(tokenizer_object=t, pad_token="<pad>", eos_token="</s>",
                                  unk_token="<unk>")
    cfg = T5Config(vocab_size=len(vocab), d_model=32, d_kv=8, d_ff=64, num_layers=1,
                   num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    torch.manual_seed(seed)
    T5ForConditionalGeneration(cfg).save_pretrained(str(src))
    tok.save_pretrained(str(src))
    return src


def hf_llama(src: Path, *, seed: int = 0) -> Path:
    """A 1-layer random Llama with a word-level tokenizer, saved in Hugging Face layout."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    t, vocab = _word_tokenizer(["<unk>", "<s>", "</s>"], "<s> $A", [("<s>", 1)])
    tok = PreTrainedTokenizerFast(tokenizer_object=t, bos_token="<s>", eos_token="</s>",
                                  unk_token="<unk>")
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=256, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(seed)
    LlamaForCausalLM(cfg).save_pretrained(str(src))
    tok.save_pretrained(str(src))
    return src


def build_bi_encoder(out: Path, *, kind: str = "relevance", seed: int = 0) -> Path:
    """A 2-layer BERT + a random (cosine, overlap) head, exported as a ragctl
    ct2-bi-encoder model."""
    src = hf_bert(out.parent / (out.name + "-hf"), seed=seed)
    _convert(src, out)
    (out / "tokenizer.json").write_bytes((src / "tokenizer.json").read_bytes())
    rng = np.random.default_rng(seed)
    np.savez(out / "head.npz", weight=rng.normal(size=(1, 2)).astype(np.float32),
             bias=np.array([0.1], dtype=np.float32), pooling=np.array("mean"),
             features=np.array(["cosine", "overlap"]))
    _manifest(out, "ct2-bi-encoder", kind)
    return out


def _word_tokenizer(special: list[str], template: str, specials: list[tuple[str, int]]):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(special + WORDS)}
    t = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    t.post_processor = processors.TemplateProcessing(single=template, special_tokens=specials)
    return t, vocab


def _export_generative(src: Path, out: Path, backend: str, kind: str) -> Path:
    """Convert a Hugging Face model that scores "true"/"false" into a ragctl model dir."""
    _convert(src, out)
    (out / "tokenizer.json").write_bytes((src / "tokenizer.json").read_bytes())
    _manifest(out, backend, kind, prompt="question {a} context {b} relevant")
    return out


def build_t5(out: Path, *, kind: str = "relevance", seed: int = 0) -> Path:
    src = hf_t5(out.parent / (out.name + "-hf"), seed=seed)
    return _export_generative(src, out, "ct2-seq2seq", kind)


def build_llama(out: Path, *, kind: str = "relevance", seed: int = 0) -> Path:
    src = hf_llama(out.parent / (out.name + "-hf"), seed=seed)
    return _export_generative(src, out, "ct2-decoder", kind)
