"""``VLLMPolicy``: generation with an in-process vLLM engine (CUDA GPU only; ``vllm`` is imported on construction).

Not exercised by the CPU test suite; ``clinical_gym.rollout.selection`` decides when it is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from clinical_gym.rollout.policy import Generation, Prompt
from clinical_gym.rollout.selection import require_vllm


class VLLMPolicy:
    """A ``Policy`` over ``vllm.LLM``: prompts go in as token ids (``TokensPrompt``), so nothing is re-tokenized.

    ``model`` is a model path or id (``engine_kwargs`` go to ``vllm.LLM``, e.g. ``gpu_memory_utilization=0.3`` to
    share the GPU with a trainer) or an existing ``vllm.LLM``. Prompt ``i`` of a seeded batch samples with
    ``seed + i``. Logprobs are vLLM's (by default those of the unscaled model distribution); trainers recompute
    their own. ``sync_weights`` copies a training model's current weights into the engine.
    """

    def __init__(self, model: str | Any, *, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                 stop_token_ids: Iterable[int] | None = None, **engine_kwargs: Any) -> None:
        vllm = require_vllm()
        self.llm = vllm.LLM(model=model, **engine_kwargs) if isinstance(model, str) else model
        self.tokenizer = self.llm.get_tokenizer()
        self.temperature, self.top_p, self.top_k = temperature, top_p, top_k
        self.stop_token_ids = list(stop_token_ids) if stop_token_ids is not None else None

    def generate(self, prompts: Sequence[Prompt], *, seed: int | None = None) -> list[Generation]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        inputs, params = [], []
        for i, prompt in enumerate(prompts):
            ids = prompt.token_ids if prompt.token_ids is not None else self.tokenizer.apply_chat_template(
                list(prompt.messages), add_generation_prompt=True, tokenize=True)
            inputs.append(TokensPrompt(prompt_token_ids=list(ids)))
            params.append(SamplingParams(n=1, temperature=self.temperature, top_p=self.top_p, top_k=self.top_k,
                                         max_tokens=prompt.max_new_tokens, logprobs=0,
                                         seed=None if seed is None else seed + i, stop_token_ids=self.stop_token_ids))
        outputs = self.llm.generate(inputs, params, use_tqdm=False)
        return [_generation(out.outputs[0]) for out in outputs]

    def sync_weights(self, model: Any) -> None:
        """Load ``model``'s current weights (a transformers model, or a peft model with its adapters merged for the
        copy) into the engine, then clear its prefix cache. Single process, unsharded models only."""
        runner_model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        for name, tensor in _named_weights(model):
            runner_model.load_weights([(name, tensor)])
        self.llm.reset_prefix_cache()


def _generation(output: Any) -> Generation:
    ids = tuple(output.token_ids)
    logprobs = tuple(step[token].logprob for step, token in zip(output.logprobs, ids)) if output.logprobs else ()
    return Generation(output.text, ids, logprobs, "length" if output.finish_reason == "length" else "stop")


def _named_weights(model: Any) -> Iterator[tuple[str, Any]]:
    """Parameters under the names vLLM expects; a peft model's adapters are merged while they are read."""
    prefix = getattr(model, "prefix", None)
    if prefix is None:  # not a peft model
        yield from ((name, p.data) for name, p in model.named_parameters())
        return
    model.merge_adapter()
    try:
        for name, p in model.named_parameters():
            name = name.removeprefix("base_model.model.").replace(".base_layer", "")
            if prefix not in name and "original_module" not in name:
                yield name.replace("modules_to_save.default.", ""), p.data
    finally:
        model.unmerge_adapter()
