"""Policies: transformers (batched, left padding, KV cache, seeded sampling), scripted, OpenAI-compatible endpoint
(a real local HTTP server), and the engine selection that decides when vLLM is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="the transformers policy needs the [train] extra")

from fake_openai import serve  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.llm import OpenAICompatClient  # noqa: E402
from clinical_gym.rollout import OpenAICompatPolicy, Policy, Prompt, ScriptedPolicy, choose_engine, make_policy  # noqa: E402
from clinical_gym.rollout.selection import VLLM_HINT, vllm_installed  # noqa: E402
from clinical_gym.rollout.transformers_policy import TransformersPolicy  # noqa: E402
from clinical_gym.trainers.common.logprobs import token_logprobs  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

MESSAGES = [[{"role": "system", "content": "answer with one word"}, {"role": "user", "content": "how many lungs?"}],
            [{"role": "user", "content": "a fever"}]]


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return tiny_llama(tokenizer, seed=1)


def prompts(tokenizer, max_new_tokens: int = 12) -> list[Prompt]:
    return [Prompt(m, max_new_tokens, list(tokenizer.apply_chat_template(m, add_generation_prompt=True,
                                                                         return_dict=True)["input_ids"]))
            for m in MESSAGES]


def test_batched_left_padded_decoding_equals_one_prompt_at_a_time(tokenizer, model):
    policy = TransformersPolicy(model, tokenizer, temperature=0)
    batch = prompts(tokenizer)
    assert len(batch[0].token_ids) != len(batch[1].token_ids)  # so the shorter one is padded
    together = policy.generate(batch)
    alone = [policy.generate([p])[0] for p in batch]
    assert [g.token_ids for g in together] == [g.token_ids for g in alone]
    expected = model.generate(torch.tensor([batch[0].token_ids]), max_new_tokens=12, do_sample=False)
    assert list(together[0].token_ids) == expected[0, len(batch[0].token_ids):].tolist()[:len(together[0].token_ids)]


def test_logprobs_are_those_the_trainer_recomputes(tokenizer, model):
    policy = TransformersPolicy(model, tokenizer, temperature=0.7)
    for prompt, generation in zip(prompts(tokenizer), policy.generate(prompts(tokenizer), seed=3)):
        ids = torch.tensor([list(prompt.token_ids) + list(generation.token_ids)])
        generated = torch.zeros(1, ids.shape[1] - 1)
        generated[0, len(prompt.token_ids) - 1:] = 1
        with torch.no_grad():
            recomputed = token_logprobs(model, ids, torch.ones_like(ids), generated, temperature=0.7)
        recomputed = recomputed[0, len(prompt.token_ids) - 1:]
        assert torch.allclose(recomputed, torch.tensor(generation.logprobs), atol=1e-4)


def test_sampling_is_reproducible_per_seed_and_respects_limits(tokenizer, model):
    policy = TransformersPolicy(model, tokenizer, temperature=1.0, top_p=0.9, top_k=50)
    batch = [Prompt(p.messages, n, p.token_ids) for p, n in zip(prompts(tokenizer), (3, 9))]
    first, again, other = (policy.generate(batch, seed=s) for s in (5, 5, 6))
    assert first == again and first != other
    assert [len(g.token_ids) <= n for g, n in zip(first, (3, 9))] == [True, True]
    assert all(g.finish_reason == ("stop" if g.token_ids[-1] == tokenizer.eos_token_id else "length") for g in first)


def test_stop_token_ends_a_row_and_is_kept_out_of_the_text(tokenizer, model):
    greedy = TransformersPolicy(model, tokenizer, temperature=0).generate(prompts(tokenizer, 4))
    assert [g.finish_reason for g in greedy] == ["length", "length"]
    stopper = greedy[0].token_ids[0]
    policy = TransformersPolicy(model, tokenizer, temperature=0, stop_token_ids=[stopper])
    first, second = policy.generate(prompts(tokenizer, 4))
    assert first.token_ids == (stopper,) and first.finish_reason == "stop" and first.text == ""
    cut = greedy[1].token_ids.index(stopper) + 1 if stopper in greedy[1].token_ids else 4
    assert second.token_ids == greedy[1].token_ids[:cut]


def prefill_widths(model):
    """The width of the ``input_ids`` of every forward pass of ``model`` that runs more than one token per row."""
    widths: list[int] = []
    handle = model.register_forward_pre_hook(
        lambda module, args, kwargs: widths.append(kwargs["input_ids"].shape[1])
        if kwargs["input_ids"].shape[1] > 1 else None, with_kwargs=True)
    return widths, handle


def test_a_continued_prompt_prefills_only_its_new_tokens_and_gives_the_same_tokens(tokenizer, model):
    reuse = TransformersPolicy(model, tokenizer, temperature=0)
    fresh = TransformersPolicy(model, tokenizer, temperature=0, prefix_cache=0)
    first = prompts(tokenizer, 6)
    replies = reuse.generate(first)
    assert len(reuse.prefixes) == 2 and len(fresh.prefixes) == 0
    said = tokenizer.encode("yes, since this morning", add_special_tokens=False)
    second = [Prompt([], 6, list(p.token_ids) + list(g.token_ids) + said) for p, g in zip(first, replies)]
    widths, handle = prefill_widths(model)
    try:
        continued = reuse.generate(second)
        assert widths == [1 + len(said)]  # the last reply token and the environment's words, not the whole prompt
        assert [g.token_ids for g in continued] == [g.token_ids for g in fresh.generate(second)]
        widths.clear()
        third = [Prompt([], 4, list(second[0].token_ids) + list(continued[0].token_ids) + said), first[1]]
        mixed = reuse.generate(third)  # one row continues, the other starts over: padded into one prefill
        assert widths == [max(1 + len(said), len(first[1].token_ids))]
        assert [g.token_ids for g in mixed] == [g.token_ids for g in fresh.generate(third)]
    finally:
        handle.remove()


def test_a_repeated_prompt_prefills_once_and_samples_as_if_each_ran(tokenizer, model):
    """A GRPO group asks for the same prompt group_size times: it prefills once and its cache and logits are copied
    to each row (issue 23), which then sample independently; greedy and seeded samples equal a prefill of every
    row."""
    first, second = prompts(tokenizer, 8)
    batch = [first, second, first, first, second]
    rows: list[int] = []
    handle = model.register_forward_pre_hook(
        lambda module, args, kwargs: rows.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[1] > 1 else None, with_kwargs=True)
    try:
        for temperature in (0, 1.0):
            shared = TransformersPolicy(model, tokenizer, temperature=temperature)
            every = TransformersPolicy(model, tokenizer, temperature=temperature, share_prompts=False)
            rows.clear()
            together = shared.generate(batch, seed=11)
            assert rows == [2]  # the two distinct prompts, not five rows
            rows.clear()
            apart = every.generate(batch, seed=11)
            assert rows == [5]
            assert [g.token_ids for g in together] == [g.token_ids for g in apart]
            for a, b in zip(together, apart):
                assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
        sampled = together  # temperature 1: the copies of one prompt sampled apart
        assert len({sampled[0].token_ids, sampled[2].token_ids, sampled[3].token_ids}) > 1
    finally:
        handle.remove()


def test_kept_prefixes_are_dropped_when_the_weights_change(tokenizer, model):
    policy = TransformersPolicy(model, tokenizer, temperature=0)
    first = prompts(tokenizer, 3)[:1]
    reply = policy.generate(first)[0]
    follow = [Prompt([], 3, list(first[0].token_ids) + list(reply.token_ids) + [5, 6])]
    with torch.no_grad():
        next(model.parameters()).mul_(1.0)  # an in-place update (what an optimizer step does)
    widths, handle = prefill_widths(model)
    try:
        policy.generate(follow)
    finally:
        handle.remove()
    assert widths == [len(follow[0].token_ids)]  # prefilled from scratch


def test_messages_only_prompts_are_templated_and_the_model_mode_restored(tokenizer, model):
    model.train()
    policy = TransformersPolicy(model, tokenizer, temperature=0)
    by_messages = policy.generate([Prompt(MESSAGES[0], 5)])
    assert by_messages[0].token_ids == policy.generate(prompts(tokenizer, 5)[:1])[0].token_ids
    assert model.training
    model.eval()
    assert isinstance(policy, Policy)
    with pytest.raises(ValueError, match="max_new_tokens"):
        policy.generate([Prompt(MESSAGES[0], 0)])


def test_scripted_policy_tokenizes_and_cuts_its_replies(tokenizer):
    policy = ScriptedPolicy(lambda messages: "two lungs", tokenizer)
    full, cut = policy.generate([Prompt(MESSAGES[0], 50), Prompt(MESSAGES[0], 2)])
    assert full.text == "two lungs" and full.token_ids[-1] == tokenizer.eos_token_id and full.finish_reason == "stop"
    assert len(cut.token_ids) == 2 and cut.finish_reason == "length" and "two lungs".startswith(cut.text)
    assert ScriptedPolicy(lambda m: "hi").generate([Prompt(MESSAGES[0], 5)])[0].token_ids == ()


def test_openai_policy_sends_token_ids_and_reads_tokens_back():
    body = {"choices": [{"index": 0, "text": "two", "finish_reason": "length",
                         "logprobs": {"tokens": ["token_id:17", "token_id:4"], "token_logprobs": [-0.5, -1.25]}}]}
    with serve([("json", body)]) as url:
        policy = OpenAICompatPolicy(OpenAICompatClient(base_url=url, model="doctor", max_retries=0), temperature=0.7)
        generation, = policy.generate([Prompt(MESSAGES[0], 8, [1, 2, 3])], seed=11)
        request = url.requests[-1]
    assert generation.token_ids == (17, 4) and generation.logprobs == (-0.5, -1.25)
    assert generation.text == "two" and generation.finish_reason == "length"
    assert request.path == "/v1/completions"
    assert request.body["prompt"] == [1, 2, 3] and request.body["max_tokens"] == 8 and request.body["seed"] == 11
    assert request.body["logprobs"] == 1 and request.body["return_tokens_as_token_ids"] is True
    assert request.body["temperature"] == 0.7 and request.body["model"] == "doctor"


def test_openai_policy_chats_when_there_are_no_token_ids():
    logprobs = {"content": [{"token": "Two", "logprob": -0.1}, {"token": ".", "logprob": -0.2}]}
    reply = {"choices": [{"index": 0, "finish_reason": "stop", "logprobs": logprobs,
                          "message": {"role": "assistant", "content": "Two."}}]}
    with serve([("json", reply), ("ok", "Fever.")]) as url:
        policy = make_policy("openai:doctor", base_url=url, max_retries=0)
        generations = policy.generate([Prompt(MESSAGES[0], 8), Prompt(MESSAGES[1], 8)])
        bodies = [r.body for r in url.requests]
    assert {g.text for g in generations} == {"Two.", "Fever."}
    two = next(g for g in generations if g.text == "Two.")
    assert two.token_ids == () and two.logprobs == (-0.1, -0.2) and two.finish_reason == "stop"
    assert sorted(map(str, (b["messages"] for b in bodies))) == sorted(map(str, MESSAGES))  # sent concurrently
    assert all(b["logprobs"] is True and "seed" not in b and b["max_tokens"] == 8 for b in bodies)


def test_engine_selection():
    assert choose_engine("transformers") == "transformers"
    assert choose_engine("auto", has_vllm=lambda: False, has_cuda=lambda: True) == "transformers"
    assert choose_engine("auto", has_vllm=lambda: True, has_cuda=lambda: False) == "transformers"
    assert choose_engine("auto", has_vllm=lambda: True, has_cuda=lambda: True) == "vllm"
    assert choose_engine("vllm", has_vllm=lambda: True, has_cuda=lambda: True) == "vllm"
    with pytest.raises(ValueError, match="CUDA GPU"):
        choose_engine("vllm", has_vllm=lambda: True, has_cuda=lambda: False)
    with pytest.raises(ValueError, match="unknown generation engine"):
        choose_engine("tensorrt")
    with pytest.raises(ValueError, match="bad policy spec"):
        make_policy("transformers")


def test_vllm_is_refused_cleanly_where_it_cannot_run():
    if vllm_installed() and torch.cuda.is_available():
        pytest.skip("vLLM can run here")
    with pytest.raises(ValueError, match="vllm"):
        make_policy("vllm:/models/doctor")
    if not vllm_installed():
        from clinical_gym.rollout.vllm_policy import VLLMPolicy

        with pytest.raises(ImportError, match="pip install"):
            VLLMPolicy("/models/doctor")
        assert "CUDA GPU" in VLLM_HINT


def test_rollout_and_trainer_settings_import_no_torch():
    code = ("import sys, clinical_gym.rollout, clinical_gym.cli.train, clinical_gym.trainers.grpo.config, clinical_gym.trainers.common.runtime, "
            "clinical_gym.trainers.common.config_cli; "
            "print(sorted(m for m in ('torch', 'transformers', 'vllm', 'accelerate') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
