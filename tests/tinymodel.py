"""A tiny GGUF model of our own, so the llama.cpp backend is tested on real llama.cpp offline.

LLaMA architecture, random float32 weights (about 0.5 MB), a byte-level GPT-2 style vocabulary
(the 256 byte tokens, a few merges, and ChatML's control tokens) so that any text can be tokenized
and generated, and a ChatML-like chat template in `tokenizer.chat_template`.

Random weights pick among the tokens a grammar allows about evenly, so a JSON string would run
for a couple of hundred characters before a `"` closed it. One nudge keeps answers short: every
token embedding carries a constant in dimension 0 (the residual stream keeps it), and the output
row of `"` reads that dimension, so `"` gets a fixed logit bonus and most strings end within a few
characters. The weights are otherwise random: answers are nonsense, but of the right shape.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

N_EMBD, N_LAYER, N_HEAD, N_FF, N_CTX = 64, 2, 4, 128, 4096
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MERGES = ("Ġ t", "Ġ a", "t h", "i n", "e r", "o n", "Ġt h", "Ġ s")  # llama.cpp wants some merges
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
QUOTE_BONUS = 8.0  # the logit bonus of `"` (see the module docstring)


def byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode table: each byte as one printable character (its BPE alphabet)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    chars, n = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return [chars[b] for b in range(256)]


def vocabulary() -> tuple[list[str], list[int]]:
    tokens = byte_tokens()
    tokens += [a + b for a, b in (m.split(" ") for m in MERGES)]
    types = [gguf.TokenType.NORMAL] * len(tokens)
    tokens += list(SPECIALS)
    types += [gguf.TokenType.CONTROL] * len(SPECIALS)
    return tokens, [int(t) for t in types]


def build_tiny_gguf(path: Path, seed: int = 0, chat_template: str = CHAT_TEMPLATE) -> Path:
    """Write the tiny model to `path` and return it."""
    path = Path(path)
    rng = np.random.default_rng(seed)
    tokens, types = vocabulary()
    n_vocab = len(tokens)
    bos, eos = tokens.index("<|endoftext|>"), tokens.index("<|im_end|>")

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("smalltown-tiny-test")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(list(MERGES))
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.add_eot_token_id(eos)
    w.add_pad_token_id(bos)
    w.add_add_bos_token(False)
    w.add_add_eos_token(False)
    w.add_chat_template(chat_template)

    def rand(*shape: int, std: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(shape) * std).astype(np.float32)

    # numpy shapes are (rows, cols) = ggml's (ne1, ne0) reversed: a weight maps ne0 -> ne1
    embd = rand(n_vocab, N_EMBD, std=0.5)
    embd[:, 0] = 4.0  # the constant channel the `"` bonus reads
    out = rand(n_vocab, N_EMBD, std=0.5)
    out[:, 0] = 0.0
    rms = np.sqrt((4.0**2 + (N_EMBD - 1) * 0.5**2) / N_EMBD)  # RMSNorm's divisor: the channel reads 4 / rms
    out[tokens.index('"'), 0] = QUOTE_BONUS * rms / 4.0
    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, np.float32))
    w.add_tensor("output.weight", out)
    for i in range(N_LAYER):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(f"blk.{i}.{name}.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, np.float32))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", rand(N_FF, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_up.weight", rand(N_FF, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_down.weight", rand(N_EMBD, N_FF))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


if __name__ == "__main__":  # python3 tests/tinymodel.py /tmp/tiny.gguf
    import sys

    print(build_tiny_gguf(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny.gguf")))
