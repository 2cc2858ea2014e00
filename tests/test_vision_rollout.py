"""Vision policies through the rollout interface: images (OpenAI content parts) reach an OpenAI-compatible endpoint
(a real HTTP server on 127.0.0.1, ``tests/fake_openai.py``) from the collector and from ``clinical-gym bench``
``openai:`` agents; a transformers vision-language model (a tiny random LLaVA with an offline processor,
``trainers/common/tiny_vlm.py``) is rolled out in token mode with its image tokens and pixels, samples with the
logprobs the trainer recomputes, and GRPO trains it (gradients reach the vision tower)."""

from __future__ import annotations

import io
import json

import gymnasium as gym
import pytest
from fake_openai import serve
from PIL import Image

import clinical_gym  # noqa: F401  (registers the ids)
from clinical_gym.benchmarks.runner import BenchConfig, run_bench
from clinical_gym.content_parts import data_url_bytes, image_urls, parts, png_data_url, text_of
from clinical_gym.rollout import EpisodeSpec, OpenAICompatPolicy, Prompt, RolloutCollector, RolloutLimits
from clinical_gym.rollout.chat_tokens import ChatTokens, TemplateError
from clinical_gym.rollout.native_tools import native_messages
from clinical_gym.spaces import UnicodeText
from clinical_gym.tool_env.policies import call_text

torch = pytest.importorskip("torch", reason="the VLM tests need the [train] extra")

STEMI = "vd-0-9"
SUBMIT = call_text("submit_answer", {"answer": "A", "reasoning": "read the tracing"})


def visual_env(**kwargs):  # noqa: ANN201
    return gym.make("VisualDiagnosis-v0", knowledge=None, **kwargs)


# -- OpenAI-compatible endpoints ---------------------------------------------------------------------------------
def test_an_openai_compatible_policy_sends_the_images_as_content_parts():
    with serve(default=lambda path, body: SUBMIT) as url:
        policy = OpenAICompatPolicy(base_url=url, model="vision-model", chat_logprobs=False)
        collector = RolloutCollector(policy, visual_env, limits=RolloutLimits(64, 100_000), num_envs=1)
        (trajectory,) = collector.collect([EpisodeSpec(seed=0, options={"task_id": STEMI})])
        sent = url.requests[0].body["messages"]
    user = sent[1]
    assert user["role"] == "user" and [p["type"] for p in user["content"]] == ["text", "text", "image_url"]
    image = Image.open(io.BytesIO(data_url_bytes(user["content"][2]["image_url"]["url"])))
    assert image.format == "PNG" and image.width > 1000
    assert trajectory.terminated and trajectory.outcome["answer"] == "A"
    assert image_urls(trajectory.messages[1]["content"]) == [user["content"][2]["image_url"]["url"]]


def test_tool_results_with_images_become_tool_messages_then_a_user_image_message():
    call = json.dumps({"tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "get_prior_study", "arguments": json.dumps({"patient_id": "VD000009"})}}]})
    reply = parts("prior ECG [Image 2: 12-lead ECG]", ["data:image/png;base64,AAAA"])
    out = native_messages([{"role": "user", "content": "read it"}, {"role": "assistant", "content": call},
                           {"role": "user", "content": reply}])
    assert out[2] == {"role": "tool", "tool_call_id": "call_1", "content": "prior ECG [Image 2: 12-lead ECG]"}
    assert out[3]["role"] == "user" and image_urls(out[3]["content"]) == ["data:image/png;base64,AAAA"]


def test_bench_runs_an_openai_agent_on_visual_diagnosis(tmp_path):
    with serve(default=lambda path, body: SUBMIT) as url:
        run_bench(BenchConfig(envs="VisualDiagnosis-v0", agents="openai:vision-model", out=tmp_path, episodes=2,
                              base_url=url, progress=False, env_kwargs={"knowledge": None}))
        with_images = [r for r in url.requests if r.body and any(
            isinstance(m.get("content"), list) for m in r.body.get("messages", []))]
    assert len(with_images) == 2
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    opening = rows[0]["transcript"][1]["content"]
    assert "bytes omitted" in opening[-1]["image_url"]["url"]  # results keep a stand-in, not the PNG
    assert (tmp_path / "results.jsonl").stat().st_size < 200_000


# -- a transformers vision-language model ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def vlm():  # noqa: ANN201
    from clinical_gym.trainers.common.tiny_models import tiny_tokenizer
    from clinical_gym.trainers.common.tiny_vlm import tiny_vlm, tiny_vlm_processor

    env = visual_env(max_turns=2)
    obs, info = env.reset(seed=0)
    corpus = [info["system_prompt"], obs, SUBMIT, "colour? one letter red blue r b"]
    processor = tiny_vlm_processor(tiny_tokenizer(corpus, vocab_size=1200))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield processor, tiny_vlm(processor)
    torch.set_num_threads(before)


def image_token_count(processor, ids) -> int:  # noqa: ANN001
    image_id = processor.tokenizer.convert_tokens_to_ids("<image>")
    return sum(1 for i in ids if i == image_id)


def test_token_mode_rollouts_carry_the_image_tokens_and_keep_the_parts(vlm):
    from clinical_gym.rollout.vlm_policy import TransformersVLMPolicy

    processor, model = vlm
    prior = call_text("get_prior_study", {"patient_id": "VD000009"})
    policy = _Fixed(TransformersVLMPolicy(model, processor), processor, [prior, SUBMIT])
    collector = RolloutCollector(policy, lambda: visual_env(max_turns=3), processor,
                                 limits=RolloutLimits(64, 20_000), num_envs=1)
    (trajectory,) = collector.collect([EpisodeSpec(seed=0, options={"task_id": STEMI})], seed=0)
    assert image_token_count(processor, trajectory.opening_ids) == 16  # one image: 16 image tokens
    assert image_token_count(processor, trajectory.turns[0].env_ids) == 16  # the prior ECG
    assert len(image_urls(trajectory.messages[1]["content"])) == len(image_urls(trajectory.messages[3]["content"])) == 1
    assert trajectory.terminated
    with pytest.raises(TemplateError, match="image_mode='describe'"):
        ChatTokens(processor.tokenizer).opening("system", trajectory.messages[1])


def test_vlm_sampling_logprobs_are_what_the_trainer_recomputes(vlm):
    from clinical_gym.rollout.vision import VisionInputs
    from clinical_gym.rollout.vlm_policy import TransformersVLMPolicy
    from clinical_gym.trainers.common.logprobs import token_logprobs

    processor, model = vlm
    red, blue = (png_data_url(_png((220, 30, 30))), png_data_url(_png((30, 30, 220))))
    conversations = [[{"role": "user", "content": parts("colour?", [red])}],
                     [{"role": "user", "content": parts("two colours?", [red, blue])}]]
    policy = TransformersVLMPolicy(model, processor, temperature=1.0)
    prompts = [Prompt(c, 6) for c in conversations]
    generations = policy.generate(prompts, seed=0)
    vision = VisionInputs(processor)
    for conversation, generation in zip(conversations, generations):
        prompt_ids = policy._template(Prompt(conversation, 6))
        assert image_token_count(processor, prompt_ids) == 16 * len(image_urls(conversation[0]["content"]))
        ids = torch.tensor([prompt_ids + list(generation.token_ids)])
        mask = torch.zeros((1, ids.shape[1] - 1))
        mask[0, len(prompt_ids) - 1:] = 1
        with torch.no_grad():
            recomputed = token_logprobs(model, ids, torch.ones_like(ids), mask, 1.0, vision(conversation))
        assert torch.allclose(recomputed[0, len(prompt_ids) - 1:], torch.tensor(generation.logprobs), atol=1e-4)
        assert image_token_count(processor, generation.token_ids) == 0  # image tokens are never sampled
    alone = policy.generate(prompts[:1], seed=0)[0]
    assert alone.text == text_of(alone.text)  # a batch of one works too (no image axis mismatch)


def test_grpo_trains_a_vision_language_model(vlm, tmp_path):
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import main

    processor, model = vlm
    vision_before = {k: v.detach().clone() for k, v in model.named_parameters() if "vision_tower" in k}
    cfg = GRPOConfig(model="in-memory", env="ColourEnv", output_dir=str(tmp_path / "run"), total_steps=2,
                     group_size=4, groups_per_step=2, max_turn_tokens=4, max_episode_tokens=256, num_minibatches=2,
                     learning_rate=1e-2, beta=0.0, seed=0, progress=False, report_to="none", save_every=2)
    main(cfg, env_factory=ColourEnv, model=model, tokenizer=processor)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["losses/grad_norm"] > 0 for r in rows)
    assert max(r["rollout/logprob_gap"] for r in rows) < 1e-4  # rollout and trainer saw the same tokens and pixels
    changed = [k for k, v in model.named_parameters() if "vision_tower" in k and not torch.equal(v, vision_before[k])]
    assert changed  # the loss reached the vision tower through the pixel inputs
    from clinical_gym.trainers.common.model import load_model

    saved = next((tmp_path / "run" / "checkpoints").glob("step-*")) / "model"
    loaded, loaded_processor = load_model(GRPOConfig(model=str(saved), env="ColourEnv", dtype="float32"))
    assert type(loaded).__name__ == "LlavaForConditionalGeneration"  # what --model PATH loads: the VLM, and
    assert type(loaded_processor).__name__ == "LlavaProcessor"  # the processor saved with the weights
    name = next(k for k in vision_before if k.endswith("weight"))
    assert torch.equal(dict(loaded.named_parameters())[name], dict(model.named_parameters())[name])


# -- helpers -------------------------------------------------------------------------------------------------------
def _png(colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), colour).save(buffer, format="PNG")
    return buffer.getvalue()


class _Fixed:
    """A VLM policy whose replies are fixed texts (tokenized), to drive an episode through given tool calls."""

    def __init__(self, policy, processor, replies: list[str]) -> None:  # noqa: ANN001
        self.policy, self.processor, self.replies, self.turn = policy, processor, replies, 0

    def generate(self, prompts, *, seed=None):  # noqa: ANN001, ANN201
        from clinical_gym.rollout import Generation

        text = self.replies[min(self.turn, len(self.replies) - 1)]
        self.turn += 1
        ids = self.processor.tokenizer.encode(text, add_special_tokens=False) + [self.processor.tokenizer.eos_token_id]
        self.policy.generate(prompts, seed=seed)  # the model runs on the prompt (its pixels included)
        return [Generation(text, tuple(ids), (0.0,) * len(ids))]


class ColourEnv(gym.Env):
    """One turn: a red or blue square and "colour?"; the reward is the share of the reply's letters that are the
    colour's initial (r or b), so rewards vary within a group from the first step."""

    COLOURS = {"red": ((220, 30, 30), "r"), "blue": ((30, 30, 220), "b")}

    def __init__(self) -> None:
        self.cases = [type("Case", (), {"id": key})() for key in self.COLOURS]
        self.observation_space = UnicodeText(100)
        self.action_space = UnicodeText(100)

    def reset(self, *, seed=None, options=None):  # noqa: ANN001, ANN201
        super().reset(seed=seed)
        self.key = (options or {}).get("case_id", "red")
        self.messages = [{"role": "system", "content": "one letter"},
                         {"role": "user", "content": parts("colour?", [png_data_url(_png(self.COLOURS[self.key][0]))])}]
        return "colour?", {"system_prompt": "one letter"}

    def step(self, action: str):  # noqa: ANN201
        letters = [c for c in action.lower() if c.isalpha()]
        reward = sum(c == self.COLOURS[self.key][1] for c in letters) / max(1, len(letters))
        self.messages += [{"role": "assistant", "content": action}, {"role": "user", "content": "done"}]
        return "done", reward, True, False, {"reward_components": {"colour": reward},
                                             "outcome": {"result": "done", "success": reward > 0.5}}
