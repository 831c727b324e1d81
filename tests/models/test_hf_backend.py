"""The in-process transformers backend on a tiny random Llama and a word-level tokenizer trained here."""

from __future__ import annotations

import asyncio

import pytest

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from kernelmosaic.models import Message, ModelConfigError, ModelReply, ModelUnavailable, ToolSpec, get_model  # noqa: E402
from kernelmosaic.models.hf_backend import HFBackend  # noqa: E402

CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|> system tools: {% for t in tools %}{{ t.function.name }} {% endfor %}<|im_end|> "
    "{% endif %}"
    "{% for m in messages %}<|im_start|> {{ m.role }} {{ m.content }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
CORPUS = [
    "write a cuda kernel for relu and compile it",
    "the kernel adds two vectors with one thread per element",
    "system user assistant tools compile submit test",
]
SPECIALS = ["[UNK]", "[PAD]", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
COMPILE = ToolSpec(name="compile", description="Compile.", parameters={"type": "object", "properties": {}})


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    import torch

    path = tmp_path_factory.mktemp("tiny-llama")
    word_level = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    word_level.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    word_level.train_from_iterator(CORPUS, tokenizers.trainers.WordLevelTrainer(special_tokens=SPECIALS))
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=word_level, unk_token="[UNK]", pad_token="[PAD]", eos_token="<|im_end|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=word_level.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    return path


def test_complete_returns_a_typed_reply_within_max_new_tokens(tiny_model_dir):
    model = get_model(f"hf:{tiny_model_dir}", max_new_tokens=6)
    assert isinstance(model, HFBackend) and model.for_task("relu") is model
    messages = [Message(role="system", content="write cuda"), Message(role="user", content="write a relu kernel")]
    reply = asyncio.run(model.complete(messages, [COMPILE]))
    assert isinstance(reply, ModelReply) and reply.message.role == "assistant"
    assert 1 <= reply.usage.completion_tokens <= 6
    # The prompt holds the tools line, both messages and the generation prompt, as the template wrote them.
    prompt = model.tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in messages],
        tools=[COMPILE.openai_format()],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert reply.usage.prompt_tokens == len(prompt.split())
    assert reply.finish_reason in {"stop", "length", "tool_calls"}
    assert "<|im_end|>" not in reply.message.content and "[PAD]" not in reply.message.content


def test_concurrent_episodes_share_the_model_and_all_get_replies(tiny_model_dir):
    model = get_model(f"hf:{tiny_model_dir}", max_new_tokens=3)

    async def many():
        episodes = [model.for_task(f"t{i}") for i in range(4)]
        return await asyncio.gather(*(e.complete([Message(role="user", content="compile it")], []) for e in episodes))

    replies = asyncio.run(many())
    # Greedy decoding of one prompt: every episode must get the same text, whatever the interleaving.
    assert len({r.raw for r in replies}) == 1 and all(r.usage.completion_tokens <= 3 for r in replies)


def test_generated_tool_call_text_becomes_a_tool_call(tiny_model_dir, monkeypatch):
    model = get_model(f"hf:{tiny_model_dir}", max_new_tokens=4)
    generated = 'ok <tool_call> {"name": "compile", "arguments": {}} </tool_call>'
    monkeypatch.setattr(model, "_decode", lambda ids: generated)  # random weights never write one
    reply = asyncio.run(model.complete([Message(role="user", content="compile it")], [COMPILE]))
    assert [c.name for c in reply.message.tool_calls] == ["compile"]
    assert reply.finish_reason == "tool_calls" and reply.raw == generated and reply.message.content == "ok"


def test_bad_paths_and_options_are_config_errors(tmp_path, tiny_model_dir):
    with pytest.raises(ModelConfigError, match="no config.json"):
        get_model(f"hf:{tmp_path}")
    with pytest.raises(ModelConfigError, match=r"\[model\] max_new_tokens: .*greater than or equal to 1 \(got 0\)"):
        get_model(f"hf:{tiny_model_dir}", max_new_tokens=0)
    with pytest.raises(ModelConfigError, match=r"unknown key `max_new_tokns` in \[model\] \(did you mean "
                                               r"`max_new_tokens`\?\)"):
        get_model(f"hf:{tiny_model_dir}", max_new_tokns=3)
    with pytest.raises(ModelConfigError, match="unknown dtype"):
        get_model(f"hf:{tiny_model_dir}", dtype="float7")


def test_generation_failure_is_a_typed_error(tiny_model_dir, monkeypatch):
    model = get_model(f"hf:{tiny_model_dir}", max_new_tokens=2)

    def out_of_memory(**kwargs):
        raise RuntimeError("CUDA out of memory")

    monkeypatch.setattr(model.model, "generate", out_of_memory)
    with pytest.raises(ModelUnavailable, match="generation failed: RuntimeError: CUDA out of memory"):
        asyncio.run(model.complete([Message(role="user", content="compile it")], []))


def test_loading_prints_no_progress_bar(tiny_model_dir, capfd):
    transformers.utils.logging.enable_progress_bar()  # as a fresh process has it
    get_model(f"hf:{tiny_model_dir}", max_new_tokens=1)
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "it/s" not in err, err
