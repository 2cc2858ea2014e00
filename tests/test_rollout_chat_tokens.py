"""ChatTokens: the opening is templated once, each environment reply is a template delta, unsafe templates fail."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers", reason="tokenizers come from the [train] extra")

from clinical_gym.rollout import ChatTokens, TemplateError  # noqa: E402
from clinical_gym.trainers.common.tiny_models import CHATML_TEMPLATE, tiny_tokenizer  # noqa: E402

SYSTEM = "answer with one word"
FIRST = {"role": "user", "content": "the patient has a fever"}
REPLY = {"role": "user", "content": "since yesterday, and a cough."}


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


def templated(tokenizer, messages, add_generation_prompt):
    return list(tokenizer.apply_chat_template(messages, add_generation_prompt=add_generation_prompt,
                                              return_dict=True)["input_ids"])


def test_opening_is_the_templated_system_and_first_message(tokenizer):
    chat = ChatTokens(tokenizer)
    assert chat.opening(SYSTEM, FIRST) == templated(tokenizer, [{"role": "system", "content": SYSTEM}, FIRST], True)
    assert chat.opening(None, FIRST) == templated(tokenizer, [FIRST], True)


def test_deltas_rebuild_the_templated_conversation(tokenizer):
    chat = ChatTokens(tokenizer)
    answer = "the fever"
    generated = tokenizer.encode(answer, add_special_tokens=False) + [tokenizer.eos_token_id]
    ids = chat.opening(SYSTEM, FIRST) + generated + chat.after_reply(generated, REPLY)
    messages = [{"role": "system", "content": SYSTEM}, FIRST, {"role": "assistant", "content": answer}, REPLY]
    assert ids == templated(tokenizer, messages, True)
    assert chat.closing(generated) == []


def test_a_cut_reply_gets_the_end_of_turn_token(tokenizer):
    chat = ChatTokens(tokenizer)
    cut = tokenizer.encode("the fev", add_special_tokens=False)
    assert chat.turn_end_id == tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert chat.closing(cut) == [chat.turn_end_id]
    assert chat.after_reply(cut, REPLY)[0] == chat.turn_end_id
    assert chat.after_reply(cut, REPLY)[1:] == chat.after_reply(cut + [chat.turn_end_id], REPLY)


def test_templates_that_rewrite_earlier_turns_are_rejected():
    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = "{{ messages | length }}" + CHATML_TEMPLATE  # the count at the top changes every turn
    with pytest.raises(TemplateError, match="prefix"):
        ChatTokens(tokenizer)


def test_templates_that_drop_earlier_reasoning_are_rejected():
    tokenizer = tiny_tokenizer()  # like templates that strip <think> from all but the last assistant turn
    tokenizer.chat_template = CHATML_TEMPLATE.replace(
        "message['content']", "(message['content'] if loop.last or message['role'] != 'assistant' else '')")
    chat = ChatTokens(tokenizer)  # the opening and the first reply are fine ...
    with pytest.raises(TemplateError, match="prefix-stable"):
        chat.after_reply(chat.closing([]), REPLY)  # ... but a later turn would rewrite the reply the model saw


def test_templates_without_an_end_of_turn_token_are_rejected():
    tokenizer = tiny_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    with pytest.raises(TemplateError, match="end tokens"):
        ChatTokens(tokenizer)


def test_tools_reach_the_template():
    tokenizer = tiny_tokenizer()
    tools = "{% if tools %}{{ '<|im_start|>' + tools[0]['name'] + '<|im_end|>' }}{% endif %}"
    tokenizer.chat_template = tools + CHATML_TEMPLATE
    with_tools = ChatTokens(tokenizer, tools=[{"name": "answer"}]).opening(SYSTEM, FIRST)
    assert tokenizer.decode(with_tools).startswith("<|im_start|>answer<|im_end|><|im_start|>system")
    assert tokenizer.decode(ChatTokens(tokenizer).opening(SYSTEM, FIRST)).startswith("<|im_start|>system")
