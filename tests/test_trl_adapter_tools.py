"""The TRL adapter's ``environment_factory`` path for tool domains: the generated class (tools as methods with
schemas TRL can read, ``reset(**row)``, ``get_reward()``), and two real ``GRPOTrainer`` steps on MedicalQA-v1 where a
tiny model (first taught to call ``submit_answer``) drives the environment through TRL's tool loop."""

from __future__ import annotations

import inspect
import json
import os

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401  (fixture)
from transformers.utils import get_json_schema  # noqa: E402

from clinical_gym.integrations.trl import ToolEnvironment, env_dataset, tool_environment  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TASKS = ["mqa-001", "mqa-002"]  # gold answers A and B
SUBMIT_A = '<tool_call>\n{"name": "submit_answer", "arguments": {"answer": "A"}}\n</tool_call>'


def trl_tools(instance: ToolEnvironment) -> list:
    """The bound methods TRL exposes as tools (its own rule: public functions of the class but reset/get_reward)."""
    return [getattr(instance, name) for name, _ in inspect.getmembers(type(instance), inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")]


def direct_reward(task_id: str, calls: list[tuple[str, dict]], finished: bool = True) -> float:
    """The reward the registered environment gives the same tool calls sent as JSON actions; for an unfinished
    episode, with a turn limit that ends it after them (the environment then grades it without an answer)."""
    env = gym.make("MedicalQA-v1", **({} if finished or not calls else {"max_turns": len(calls)}))
    env.reset(seed=0, options={"case_id": task_id})
    if not calls:
        return float(env.unwrapped.reward_fn.evaluate(env.unwrapped.episode_record()).total)
    return sum(float(env.step(json.dumps({"name": n, "arguments": a}))[1]) for n, a in calls)


def test_the_class_exposes_the_domain_tools_with_their_schemas():
    env_class = tool_environment("MedicalQA-v1")
    instance = env_class()
    probe = gym.make("MedicalQA-v1").unwrapped
    probe.reset(seed=0)
    assert {method.__name__ for method in trl_tools(instance)} == set(probe.toolkit.tools)
    schemas = {s["function"]["name"]: s["function"] for s in map(get_json_schema, trl_tools(instance))}
    for name, bound in probe.toolkit.tools.items():
        ours = bound.spec.openai_schema()["function"]["parameters"]
        assert set(schemas[name]["parameters"]["properties"]) == set(ours["properties"])
        assert set(schemas[name]["parameters"].get("required", [])) == set(ours.get("required", []))
    assert schemas["submit_answer"]["description"].startswith("Submit your final answer")


def test_tool_environment_refusals():
    with pytest.raises(TypeError, match="EnvRolloutFunc"):
        tool_environment("ClinicalInquiry-v1")
    with pytest.raises(ValueError, match="no tool"):
        tool_environment("MedicalQA-v1", tools=["think", "order_mri"])
    with pytest.raises(ValueError, match="submit"):
        tool_environment("MedicalQA-v1", tools=["think"])


def test_tool_methods_step_the_environment_and_get_reward_is_its_reward():
    env = tool_environment("MedicalQA-v1", tools=("think", "submit_answer"))()
    prompt = [{"role": "user", "content": "the ticket"}]
    assert env.reset(prompt=prompt, case_id=TASKS[1], seed=0) is None  # the row's prompt already has the ticket
    assert env.think(thought="Jaw claudication and a raised ESR suggest giant cell arteritis.") == "Noted."
    assert env.submit_answer(answer="B", reasoning="Biopsy first.").endswith("The task is over.")
    assert env.done and env.outcome["answer"] == "B" and env.case_id == TASKS[1] and env.turns == 2
    assert env.think(thought="more").startswith("Error: the task is over")
    assert env.calls == [("think", {"thought": "Jaw claudication and a raised ESR suggest giant cell arteritis."}),
                         ("submit_answer", {"answer": "B", "reasoning": "Biopsy first."})]
    assert env.get_reward() == pytest.approx(direct_reward(TASKS[1], env.calls))

    # no prompt text (TRL's placeholder row): reset hands back the ticket; an unfinished episode is graded as is,
    # like the environment grades one that runs out of turns
    ticket = env.reset(prompt=[{"role": "user", "content": ""}], case_id=TASKS[0])
    assert ticket == gym.make("MedicalQA-v1").reset(options={"case_id": TASKS[0]})[0]
    env.think(thought="Start with the history.")
    assert not env.done
    assert env.get_reward() == pytest.approx(direct_reward(TASKS[0], env.calls, finished=False))


def test_env_dataset_tool_prompt_asks_for_tool_calls():
    dataset = env_dataset("MedicalQA-v1", case_ids=TASKS, tool_prompt=True)
    system, user = dataset[0]["prompt"]
    env = gym.make("MedicalQA-v1").unwrapped
    assert system["content"].startswith(type(env).policy_text().strip()[:200])
    assert "call submit_answer" in system["content"] and "JSON object" not in system["content"]
    assert user["content"] == gym.make("MedicalQA-v1").reset(options={"case_id": TASKS[0]})[0]


def teach_submit_a(model, tokenizer, prompts, tools, steps=60):
    """Fit the tiny model to answer every prompt with a submit_answer("A") tool call (a stand-in for SFT)."""
    target = tokenizer(SUBMIT_A, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    rows = [tokenizer.apply_chat_template(p, tools=tools, add_generation_prompt=True, tokenize=True,
                                          return_dict=True)["input_ids"] + target for p in prompts]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), tokenizer.pad_token_id)
    attention, labels = torch.zeros_like(ids), torch.full_like(ids, -100)
    for i, row in enumerate(rows):
        ids[i, width - len(row):], attention[i, width - len(row):] = torch.tensor(row), 1
        labels[i, width - len(target):] = torch.tensor(target)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=6e-3)
    for _ in range(steps):
        loss = model(input_ids=ids, attention_mask=attention, position_ids=positions, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return float(loss)


def test_two_grpo_steps_with_the_environment_factory(tmp_path, monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    env_class = tool_environment("MedicalQA-v1", tools=("think", "submit_answer"))
    episodes = []

    class Recorded(env_class):
        def get_reward(self):
            reward = super().get_reward()
            episodes.append((self.case_id, list(self.calls), self.done, reward))
            return reward

    # the domain policy makes long prompts; the tiny test model trains on the tickets alone
    dataset = env_dataset("MedicalQA-v1", case_ids=TASKS, tool_prompt=True).map(lambda r: {"prompt": r["prompt"][1:]})
    template_path = os.path.join(os.path.dirname(trl.__file__), "chat_templates", "qwen2_5.jinja")
    with open(template_path, encoding="utf-8") as f:
        template = f.read()
    tools = trl_tools(Recorded())
    texts_tokenizer = tiny_tokenizer(corpus=["x"])
    texts_tokenizer.chat_template = template
    texts = [texts_tokenizer.apply_chat_template(p, tools=tools, add_generation_prompt=True, tokenize=False)
             for p in dataset["prompt"]]
    tokenizer = tiny_tokenizer(corpus=[*texts, SUBMIT_A], vocab_size=1000)
    tokenizer.chat_template = template
    model = tiny_llama(tokenizer)
    assert teach_submit_a(model, tokenizer, dataset["prompt"], tools) < 0.2

    args = trl.GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=2,
                          max_completion_length=48, max_steps=2, learning_rate=1e-6, beta=0.0, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True, seed=0,
                          temperature=0.5, max_tool_calling_iterations=1)
    trainer = trl.GRPOTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                              environment_factory=Recorded)
    trainer.train()

    assert trainer.state.global_step == 2 and len(episodes) == 8
    steps = [entry for entry in trainer.state.log_history if "rewards/Recorded/mean" in entry]
    assert len(steps) == 2 and all(entry["tools/call_frequency"] > 0 for entry in steps)
    submitted = [e for e in episodes if e[2]]
    assert submitted and all(calls[-1] == ("submit_answer", {"answer": "A"}) for _, calls, _, _ in submitted)
    assert {case for case, *_ in submitted} <= set(TASKS)
    for case, calls, done, reward in episodes:  # every reward is what the environment gives those calls
        assert reward == pytest.approx(direct_reward(case, calls, finished=done))
    for step, entry in enumerate(steps):
        rewards = [reward for *_, reward in episodes[4 * step:4 * step + 4]]
        assert entry["rewards/Recorded/mean"] == pytest.approx(np.mean(rewards), abs=1e-5)
