"""Log-probabilities of a batch's own tokens under a model, recomputed only where the loss needs them.

Where the model's logits are a plain linear projection of its last hidden state (``lm_head``: a
``torch.nn.Linear``, no soft-capping or scaling in the config), the projection is not run by the model: it returns
the hidden states of the kept positions and ``linear_logprobs`` projects them onto the vocabulary a few rows at a
time, keeping only each row's log-normaliser; its backward pass recomputes each chunk's logits. No [rows, vocab]
tensor lives longer than one chunk (``HEAD_CHUNK_ELEMENTS``), in the forward or the backward pass (what selective
log-softmax kernels such as Liger's fused linear cross-entropy do on GPU). Same values as projecting all rows at
once, up to float rounding; one more matrix product of the kept rows by the head in the backward pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from clinical_gym.trainers.common.shared_prefix import forward_kept

CHUNK_ROWS = 2048  # vocabulary-wide softmax rows reduced at once, to bound float32 copies of the logits
HEAD_CHUNK_ELEMENTS = 2**23  # logits (rows x vocabulary, float32: 32 MiB) linear_logprobs holds at once: 170 rows
# of a 49,152-token vocabulary, whose products ran ~14% faster a row than 85 (2**22) on one core (ad hoc)
# config fields that transform the projection's output (Gemma's soft-capping, Cohere's and Granite's scales):
# such a model's logits are left to the model itself
LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "logits_scaling")


def token_logprobs(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor,
                   temperature: float = 1.0, model_inputs: Mapping[str, torch.Tensor] | None = None) -> torch.Tensor:
    """See ``token_logprobs_and_entropy``; the log-probabilities only."""
    return token_logprobs_and_entropy(model, input_ids, attention_mask, loss_mask, temperature, model_inputs)[0]


def token_logprobs_and_entropy(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                               loss_mask: torch.Tensor, temperature: float = 1.0,
                               model_inputs: Mapping[str, torch.Tensor] | None = None, *,
                               entropy: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``out[b, t] = log p(input_ids[b, t+1] | input_ids[b, :t+1])`` under ``model`` with logits divided by
    ``temperature`` (the sampling distribution), where ``loss_mask[b, t]`` is set; 0 elsewhere. Shape
    [batch, length - 1], right padding expected. Only the masked positions are projected onto the vocabulary, and a
    prompt several rows share runs once (``shared_prefix.forward_kept``; not with ``model_inputs``). The
    result is connected to the model's graph even when the mask is empty (every process runs its backward pass).
    ``model_inputs`` go to the forward pass too (a vision-language model's pixels; floating tensors in the model's
    dtype). With ``entropy`` the second result is the entropy of the (temperature-scaled) policy at the same
    positions, differentiable (the entropy bonus); else None."""
    extra = {}
    if model_inputs:
        dtype = next(model.parameters()).dtype
        extra = {k: v.to(dtype) if v.is_floating_point() else v for k, v in model_inputs.items()}
    scores = masked_scores(model, input_ids, attention_mask, loss_mask, temperature, entropy=entropy,
                           entropy_grad=entropy, model_inputs=extra)
    return scores.spread(scores.logprobs), (scores.spread(scores.entropy) if entropy else None)


def masked_scores(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor,
                  temperature: float = 1.0, *, entropy: bool = False, entropy_grad: bool = False,
                  hidden: bool = False, model_inputs: Mapping[str, torch.Tensor] | None = None) -> KeptScores:
    """``kept_scores`` of each token ``input_ids[b, t+1]`` where ``loss_mask[b, t]`` is set (the state before it is
    kept); ``KeptScores.spread`` puts a row per such token back at its place in [batch, length - 1]."""
    wanted = loss_mask.bool()
    keep = torch.zeros_like(input_ids, dtype=torch.bool)
    keep[:, :-1] = wanted
    scores = kept_scores(model, input_ids, attention_mask, keep, input_ids[:, 1:][wanted], temperature,
                         entropy=entropy, entropy_grad=entropy_grad, hidden=hidden, model_inputs=model_inputs)
    scores.wanted = wanted
    return scores


def logprobs_from_logits(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0, *,
                         entropy: bool = False, entropy_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``log softmax(logits / temperature)`` at ``targets`` for rows of logits [n, vocab] and targets [n], and with
    ``entropy`` the entropy of each row's distribution (differentiable only with ``entropy_grad``), reduced
    ``CHUNK_ROWS`` rows at a time in float32."""
    picked, entropies = [], []
    for start in range(0, targets.shape[0], CHUNK_ROWS):
        rows = logits[start:start + CHUNK_ROWS].float()
        rows = rows / temperature if temperature != 1 else rows
        chosen = rows.gather(-1, targets[start:start + CHUNK_ROWS, None]).squeeze(-1)
        normaliser = torch.logsumexp(rows, dim=-1)
        picked.append(chosen - normaliser)
        if entropy:
            with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
                # H = logsumexp(z) − Σ softmax(z) z
                entropies.append(normaliser - (torch.softmax(rows, dim=-1) * rows).sum(dim=-1))
    empty = logits.new_zeros(0, dtype=torch.float)
    row_entropy = (torch.cat(entropies) if entropies else empty) if entropy else None
    return (torch.cat(picked) if picked else empty), row_entropy


@dataclass
class KeptScores:
    """Per kept position (row-major order): ``logprobs`` [n] of the targets, ``entropy`` [n] (None unless asked
    for) and, with ``hidden``, the last hidden states [n, hidden]; ``sources``: tensors connected to every weight
    the scores came from (``anchor``); ``wanted``: the loss mask the positions came from (``masked_scores``)."""

    logprobs: torch.Tensor
    entropy: torch.Tensor | None
    hidden: torch.Tensor | None
    sources: tuple[torch.Tensor, ...]
    wanted: torch.Tensor | None = None

    @property
    def anchor(self) -> torch.Tensor:
        """A zero connected to every weight the scores came from: for a backward pass when nothing was kept (made
        only then: it reduces the whole head)."""
        return sum(0.0 * t.sum() for t in self.sources)

    def spread(self, rows: torch.Tensor) -> torch.Tensor:
        """``rows`` [n] (one per kept position) at their places in zeros shaped like the loss mask, float32; with no
        position kept, zeros still connected to the model's graph (``anchor``: every process runs its backward
        pass)."""
        out = torch.zeros(self.wanted.shape, dtype=torch.float, device=rows.device)
        if not rows.numel():
            return out + self.anchor
        out[self.wanted] = rows.float()
        return out


def kept_scores(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor,
                targets: torch.Tensor, temperature: float = 1.0, *, entropy: bool = False, entropy_grad: bool = False,
                hidden: bool = False, model_inputs: Mapping[str, torch.Tensor] | None = None) -> KeptScores:
    """``model``'s log-probabilities of ``targets`` [n] at the positions ``keep`` [rows, length] sets (logits over
    ``temperature``), with entropies and last hidden states when asked. Without ``model_inputs`` a prompt several
    rows share runs once (``forward_kept``). A plain linear head is applied by ``linear_logprobs`` (see the module
    docstring); other models' logits come from the model."""
    found = projection_head(model)
    if found is not None:
        owner, name, head = found
        with _head_replaced(owner, name):
            states = _kept_forward(model, input_ids, attention_mask, keep, model_inputs, hidden=False).logits
        weight, bias = head.weight, head.bias
        if weight.dtype != states.dtype:  # a head stored in lower precision than the model computes in
            weight, bias = weight.to(states.dtype), (bias.to(states.dtype) if bias is not None else None)
        picked, row_entropy = linear_logprobs(states, weight, bias, targets, temperature, entropy=entropy,
                                              entropy_grad=entropy_grad)
        return KeptScores(picked, row_entropy, states if hidden else None, (states, head.weight))
    out = _kept_forward(model, input_ids, attention_mask, keep, model_inputs, hidden=hidden)
    picked, row_entropy = logprobs_from_logits(out.logits, targets, temperature, entropy=entropy,
                                               entropy_grad=entropy_grad)
    sources = (out.logits,) if out.hidden is None else (out.logits, out.hidden)
    return KeptScores(picked, row_entropy, out.hidden, sources)


def _kept_forward(model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, keep: torch.Tensor,
                  model_inputs: Mapping[str, torch.Tensor] | None, hidden: bool) -> Any:
    if model_inputs:
        from clinical_gym.trainers.common.shared_prefix import KeptOutputs

        out = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep,
                    output_hidden_states=hidden, **model_inputs)
        return KeptOutputs(out.logits, out.hidden_states[-1][keep] if hidden else None)
    return forward_kept(model, input_ids, attention_mask, keep, hidden=hidden)


def projection_head(model: Any) -> tuple[Any, str, torch.nn.Linear] | None:
    """(the module holding it, its attribute name, the head) when ``model``'s logits are its ``lm_head``-style
    output embedding applied as a plain ``torch.nn.Linear`` to the last hidden state, else None: another kind of
    head (a LoRA-wrapped or sharded one), a config that transforms the logits (``LOGIT_TRANSFORMS``), or a forward
    hook on the model (it may read or edit the logits)."""
    from clinical_gym.trainers.common.sharding import is_sharded

    inner = getattr(model, "module", model)  # DDP
    wrappers = [model, inner]
    if hasattr(inner, "get_base_model"):  # peft
        inner = inner.get_base_model()
    if any(getattr(m, "_forward_hooks", None) for m in (*wrappers, inner)):
        return None  # a hook may edit the logits (a vision policy masks its image placeholders' logits)
    config = getattr(inner, "config", None)
    for part in (config, getattr(config, "text_config", None)):
        if any(getattr(part, field, None) not in (None, 1, 1.0) for field in LOGIT_TRANSFORMS):
            return None
    get_head = getattr(inner, "get_output_embeddings", None)
    head = get_head() if callable(get_head) else None
    if type(head) is not torch.nn.Linear or is_sharded(inner):
        return None
    name = next((n for n, child in inner.named_children() if child is head), None)
    return None if name is None else (inner, name, head)


@contextmanager
def _head_replaced(owner: Any, name: str) -> Iterator[None]:
    """``owner.<name>`` is the identity inside the block: the model's "logits" are its last hidden states."""
    head = getattr(owner, name)
    setattr(owner, name, torch.nn.Identity())
    try:
        yield
    finally:
        setattr(owner, name, head)


def linear_logprobs(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, targets: torch.Tensor,
                    temperature: float = 1.0, *, entropy: bool = False,
                    entropy_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``logprobs_from_logits(hidden @ weight.T + bias, targets, temperature, entropy=...)`` for hidden states
    [n, hidden] and a head ``weight`` [vocab, hidden], without holding more than ``HEAD_CHUNK_ELEMENTS`` logits at
    once (the backward pass recomputes them chunk by chunk). Differentiable in ``hidden``, ``weight`` and ``bias``;
    the entropy only with ``entropy_grad``."""
    picked, row_entropy = _LinearLogprobs.apply(hidden, weight, bias, targets, float(temperature), entropy,
                                                entropy_grad)
    return picked, (row_entropy if entropy else None)


def _head_rows(vocab: int) -> int:
    return max(1, HEAD_CHUNK_ELEMENTS // max(vocab, 1))


class _LinearLogprobs(torch.autograd.Function):
    """Chunked projection + log-softmax at the targets (and entropy); backward recomputes each chunk's logits."""

    @staticmethod
    def forward(ctx: Any, hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                targets: torch.Tensor, temperature: float, entropy: bool,
                entropy_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        n, rows = hidden.shape[0], _head_rows(weight.shape[0])
        picked = hidden.new_empty(n, dtype=torch.float)
        normaliser = torch.empty_like(picked)
        row_entropy = torch.empty_like(picked) if entropy else picked.new_zeros(0)
        for start in range(0, n, rows):
            z = _chunk_logits(hidden[start:start + rows], weight, bias, temperature)
            lse = torch.logsumexp(z, dim=-1)
            normaliser[start:start + rows] = lse
            picked[start:start + rows] = z.gather(-1, targets[start:start + rows, None]).squeeze(-1) - lse
            if entropy:  # H = logsumexp(z) − Σ softmax(z) z
                row_entropy[start:start + rows] = lse - (torch.softmax(z, dim=-1) * z).sum(dim=-1)
        ctx.save_for_backward(hidden, weight, bias, targets, normaliser)
        ctx.temperature, ctx.entropy_grad = temperature, entropy and entropy_grad
        if not ctx.entropy_grad:
            ctx.mark_non_differentiable(row_entropy)
        return picked, row_entropy

    @staticmethod
    def backward(ctx: Any, grad_picked: torch.Tensor | None, grad_entropy: torch.Tensor | None) -> tuple[Any, ...]:
        hidden, weight, bias, targets, normaliser = ctx.saved_tensors
        n, rows = hidden.shape[0], _head_rows(weight.shape[0])
        want_hidden, want_weight, want_bias = ctx.needs_input_grad[:3]
        grad_hidden = torch.zeros_like(hidden) if want_hidden else None
        grad_weight = torch.zeros_like(weight, dtype=torch.float) if want_weight else None
        grad_bias = torch.zeros_like(bias, dtype=torch.float) if want_bias else None
        use_entropy = ctx.entropy_grad and grad_entropy is not None
        for start in range(0, n, rows):
            part = slice(start, start + rows)
            h = hidden[part]
            z = _chunk_logits(h, weight, bias, ctx.temperature)
            p = torch.exp(z - normaliser[part, None])
            # d(z_t − lse)/dz = onehot(t) − p
            grad_z = p * -(grad_picked[part, None] if grad_picked is not None else 0.0)
            if grad_picked is not None:
                grad_z.scatter_add_(-1, targets[part, None], grad_picked[part, None])
            if use_entropy:  # dH/dz = −p (z − Σ p z)
                grad_z -= grad_entropy[part, None] * p * (z - (p * z).sum(dim=-1, keepdim=True))
            if ctx.temperature != 1:
                grad_z /= ctx.temperature
            grad_z = grad_z.to(weight.dtype)
            if grad_hidden is not None:
                grad_hidden[part] = grad_z @ weight
            if grad_weight is not None:
                grad_weight.addmm_(grad_z.t().float(), h.float())  # float32 sums over the chunks
            if grad_bias is not None:
                grad_bias += grad_z.float().sum(dim=0)
        return (grad_hidden, grad_weight.to(weight.dtype) if grad_weight is not None else None,
                grad_bias.to(bias.dtype) if grad_bias is not None else None, None, None, None, None)


def _chunk_logits(hidden: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                  temperature: float) -> torch.Tensor:
    """float32 logits of a chunk of rows, over ``temperature``: what the model's head and ``logprobs_from_logits``
    compute for them."""
    z = torch.nn.functional.linear(hidden, weight, bias).float()
    return z / temperature if temperature != 1 else z
