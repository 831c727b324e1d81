"""A tiny random-weight base model for showing the training loop where no real weights are available (CI, the
README's `kernelmosaic loop` on a fresh machine): a byte-level BPE tokenizer trained on the exported conversations,
KernelMosaic's ChatML tool template, and a randomly initialised Llama. It learns nothing useful in a few steps; a
real run passes its own base model (`[sft.train] model`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SPECIAL_TOKENS", "build_tiny_base"]

SPECIAL_TOKENS = ["<|im_start|>", "<|im_end|>", "[PAD]"]


def build_tiny_base(dataset: Path, out: Path, *, hidden: int = 64, layers: int = 2, vocab: int = 2048,
                    head_dim: int = 16, chat_template: str | None = None, seed: int = 0) -> Path:
    """Write the tokenizer and the model to `out` (a folder `hf:PATH` and `[sft.train] model` accept); `dataset` is
    an exported variant (`load_from_disk` folder or Parquet file) whose messages train the tokenizer. `vocab`
    256 + 3 keeps the bytes and the chat markers only (about a token a character); `chat_template` None gives
    KernelMosaic's ChatML tool template."""
    import datasets
    import tokenizers
    import torch
    import transformers

    from kernelmosaic.sft.template import chatml_tools_template

    if hidden % head_dim:
        raise ValueError(f"hidden size {hidden} is not a multiple of {head_dim} (the attention head size)")
    path = Path(dataset)
    if not path.exists():
        raise ValueError(f"{path}: no exported dataset there (run `kernelmosaic sft export` first)")
    rows = datasets.Dataset.from_parquet(str(path)) if path.suffix == ".parquet" else datasets.load_from_disk(str(path))
    corpus = [m["content"] for row in rows for m in row["messages"] if m.get("content")]
    if not corpus:
        raise ValueError(f"{path}: no message text to train a tokenizer on")
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    bpe.train_from_iterator(corpus, tokenizers.trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=SPECIAL_TOKENS, show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, pad_token="[PAD]", eos_token="<|im_end|>")
    tokenizer.chat_template = chatml_tools_template() if chat_template is None else chat_template
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 11 // 4, num_hidden_layers=layers,
        num_attention_heads=hidden // head_dim, num_key_value_heads=hidden // head_dim, max_position_embeddings=32768,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    transformers.LlamaForCausalLM(config).save_pretrained(out)
    return out
